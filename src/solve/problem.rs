//! The abstract walk problem every solver in this module works on: a simple
//! undirected graph over local node indices (the core tables left after user
//! forbids), the relevant set T, lookup flags, m:m junctions and the
//! bridges between their sides.
//!
//! It is deliberately independent of `SchemaGraph` so the brute-force suites
//! can build random instances directly, and so relaxations for infeasibility
//! explanations are just flag flips.

/// An m:m pattern on local indices: junction `k` between `sides[0]` and `sides[1]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MmJunction {
    pub k: usize,
    pub sides: [usize; 2],
}

impl MmJunction {
    /// Its two sides, in order: the patterns of a junction group share it.
    fn side_pair(&self) -> (usize, usize) {
        (self.sides[0].min(self.sides[1]), self.sides[0].max(self.sides[1]))
    }
}

/// A bridge of an m:m pattern's two sides (C3 case c, docs/generate-view.md):
/// a table `t` that is neither a side, a junction nor a lookup and references
/// both sides directly (BIRD formula1's `results`: `raceId → races`,
/// `driverId → drivers`). A walk that passes `sides[0] → t → sides[1]` (or
/// back) relates the sides through `t`, which settles C3's "both sides ⇒ a
/// junction between them" for every pattern between those sides. A bridge
/// is an ordinary table otherwise: no interior-position rule of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bridge {
    pub t: usize,
    pub sides: [usize; 2],
}

impl Bridge {
    /// Whether `a`, `b` are its two sides, in either order.
    pub fn between(&self, a: usize, b: usize) -> bool {
        (a, b) == (self.sides[0], self.sides[1]) || (a, b) == (self.sides[1], self.sides[0])
    }
}

/// One instance of the walk problem (C1–C5 of the Lucy paper).
#[derive(Debug, Clone)]
pub struct CoreProblem {
    /// Node names, for messages only.
    pub names: Vec<String>,
    /// Sorted, deduplicated neighbour lists without self loops (C1 allows a
    /// step only between two different tables joined by a relationship).
    pub adj: Vec<Vec<usize>>,
    /// Membership in T (C2, and the cost of C5).
    pub relevant: Vec<bool>,
    /// Lookup tables (C4).
    pub lookup: Vec<bool>,
    /// m:m patterns (C3).
    pub junctions: Vec<MmJunction>,
    /// Bridges between the sides of m:m patterns (C3 case c); one per table
    /// and pair of sides. Only pairs that some pattern has are read.
    pub bridges: Vec<Bridge>,
    /// Enforce C3 (switched off only to explain infeasibility).
    pub c3: bool,
    /// Enforce C4 (switched off only to explain infeasibility).
    pub c4: bool,
}

impl CoreProblem {
    /// An instance from an edge list; self loops and duplicates are dropped.
    pub fn new(n: usize, edges: &[(usize, usize)]) -> Self {
        let mut adj = vec![Vec::new(); n];
        for &(a, b) in edges {
            if a != b && a < n && b < n {
                adj[a].push(b);
                adj[b].push(a);
            }
        }
        for l in &mut adj {
            l.sort_unstable();
            l.dedup();
        }
        CoreProblem {
            names: (0..n).map(|i| format!("t{i}")).collect(),
            adj,
            relevant: vec![false; n],
            lookup: vec![false; n],
            junctions: Vec::new(),
            bridges: Vec::new(),
            c3: true,
            c4: true,
        }
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.adj.len()
    }

    pub fn is_empty(&self) -> bool {
        self.adj.is_empty()
    }

    /// Relevant nodes in index order.
    pub fn relevant_nodes(&self) -> Vec<usize> {
        (0..self.len()).filter(|&i| self.relevant[i]).collect()
    }

    /// Whether `a` and `b` are adjacent.
    pub fn adjacent(&self, a: usize, b: usize) -> bool {
        self.adj[a].binary_search(&b).is_ok()
    }

    /// m:m patterns whose junction is `k` (C3 active only).
    pub fn junctions_at(&self, k: usize) -> impl Iterator<Item = &MmJunction> + '_ {
        self.junctions.iter().filter(move |j| self.c3 && j.k == k)
    }

    /// The m:m patterns between the same two sides as pattern `q` (itself
    /// included), in pattern order: C3's conditional half asks for one of
    /// them, not all (docs/generate-view.md, "several junctions").
    pub fn junction_group(&self, q: usize) -> Vec<usize> {
        let me = self.junctions[q].side_pair();
        (0..self.junctions.len()).filter(|&o| self.junctions[o].side_pair() == me).collect()
    }

    /// [`Self::junction_group`] of every pattern, in one pass.
    pub fn junction_groups(&self) -> Vec<Vec<usize>> {
        let mut by_sides: std::collections::HashMap<(usize, usize), Vec<usize>> = std::collections::HashMap::new();
        for (q, j) in self.junctions.iter().enumerate() {
            by_sides.entry(j.side_pair()).or_default().push(q);
        }
        self.junctions.iter().map(|j| by_sides[&j.side_pair()].clone()).collect()
    }

    /// Whether some bridge of pattern `q`'s two sides sits at an interior
    /// position of `walk` between them (C3 case c): then the walk relates
    /// the sides without a junction of their group.
    pub fn bridged(&self, walk: &[usize], q: usize) -> bool {
        let [a, b] = self.junctions[q].sides;
        a != b
            && (1..walk.len().saturating_sub(1)).any(|p| {
                self.bridges
                    .iter()
                    .any(|br| br.t == walk[p] && br.between(a, b) && br.between(walk[p - 1], walk[p + 1]))
            })
    }

    /// C3's conditional half for pattern `q` on a walk holding both its
    /// sides: its junction occurs once, at an interior position, or — not
    /// occurring — another junction of its group occurs (that one's own
    /// check asks it to be once and interior) or a bridge of the sides
    /// relates them ([`Self::bridged`]).
    pub fn c3_settled(&self, walk: &[usize], q: usize) -> bool {
        let k = self.junctions[q].k;
        let occ: Vec<usize> = (0..walk.len()).filter(|&p| walk[p] == k).collect();
        if occ.len() == 1 && occ[0] != 0 && occ[0] + 1 != walk.len() {
            return true;
        }
        if !occ.is_empty() {
            return false;
        }
        let group = self.junction_group(q);
        group.iter().any(|&o| o != q && walk.contains(&self.junctions[o].k)) || self.bridged(walk, q)
    }

    /// Whether C3 restricts where a walk may go after `k`.
    pub fn is_active_junction(&self, k: usize) -> bool {
        self.junctions_at(k).next().is_some()
    }

    /// Whether C4 applies to `i`.
    pub fn is_active_lookup(&self, i: usize) -> bool {
        self.c4 && self.lookup[i]
    }

    /// Lexicographic objective (cost, length) of a walk: cost is the number of
    /// occurrences outside T (C5), length the number of tables.
    pub fn objective(&self, walk: &[usize]) -> (usize, usize) {
        (walk.iter().filter(|&&i| !self.relevant[i]).count(), walk.len())
    }

    /// Whether a step from `cur` (entered from `prev`, `None` at the start of
    /// the walk) to `next` keeps the interior-position rules of C3 and C4.
    pub fn step_allowed(&self, prev: Option<usize>, cur: usize, next: usize) -> bool {
        if !self.adjacent(cur, next) {
            return false;
        }
        let Some(p) = prev else { return true };
        if self.is_active_lookup(cur) && p != next {
            return false;
        }
        for j in self.junctions_at(cur) {
            let ok = (p == j.sides[0] && next == j.sides[1]) || (p == j.sides[1] && next == j.sides[0]);
            if !ok {
                return false;
            }
        }
        true
    }

    /// Full validity of a walk (C1–C4); `None` when valid, else the reason.
    /// Used by the production path to verify every solver answer before it
    /// becomes a view.
    pub fn violation(&self, walk: &[usize]) -> Option<String> {
        if walk.is_empty() {
            return Some("empty walk".into());
        }
        for w in 0..walk.len() {
            if walk[w] >= self.len() {
                return Some("node out of range".into());
            }
            if w + 1 < walk.len() {
                let prev = if w == 0 { None } else { Some(walk[w - 1]) };
                if !self.step_allowed(prev, walk[w], walk[w + 1]) {
                    return Some(format!(
                        "step {} -> {} breaks C1/C3/C4",
                        self.names[walk[w]],
                        self.names[walk[w + 1]]
                    ));
                }
            }
        }
        for t in self.relevant_nodes() {
            if !walk.contains(&t) {
                return Some(format!("relevant table {} missing (C2)", self.names[t]));
            }
        }
        if self.c3 {
            // Both sides in the walk: each junction between them that occurs
            // occurs once, between them, and at least one occurs — or a
            // bridge relates them (C3 case c).
            for (q, j) in self.junctions.iter().enumerate() {
                if walk.contains(&j.sides[0]) && walk.contains(&j.sides[1]) && !self.c3_settled(walk, q) {
                    return Some(format!(
                        "{} and {} are both in the walk but junction {} is not once between them (C3)",
                        self.names[j.sides[0]], self.names[j.sides[1]], self.names[j.k]
                    ));
                }
            }
        }
        None
    }
}

/// C3's and C4's interior-position rules indexed per node once, for the
/// searches' inner loops ([`CoreProblem::step_allowed`] scans every m:m
/// pattern on each call, which on 10,000-table schemas with hundreds of
/// patterns dominated the exact search). Same rules, without the adjacency
/// test: callers step along `adj`.
#[derive(Debug, Clone)]
pub struct StepRules {
    lookup: Vec<bool>,
    /// Per node: the side pairs of the active m:m patterns it is the junction of.
    sides: Vec<Vec<[usize; 2]>>,
}

impl StepRules {
    pub fn new(p: &CoreProblem) -> Self {
        let n = p.len();
        let mut sides = vec![Vec::new(); n];
        if p.c3 {
            for j in &p.junctions {
                if j.k < n {
                    sides[j.k].push(j.sides);
                }
            }
        }
        StepRules { lookup: (0..n).map(|i| p.is_active_lookup(i)).collect(), sides }
    }

    /// Whether C3 or C4 restricts where a walk may go after `u`.
    pub fn special(&self, u: usize) -> bool {
        self.lookup[u] || !self.sides[u].is_empty()
    }

    /// Whether C4 applies to `u`.
    pub fn lookup(&self, u: usize) -> bool {
        self.lookup[u]
    }

    /// Whether `u` is the junction of an active m:m pattern (C3).
    pub fn junction(&self, u: usize) -> bool {
        !self.sides[u].is_empty()
    }

    /// [`CoreProblem::step_allowed`] for adjacent `cur`, `next`.
    pub fn allowed(&self, prev: Option<usize>, cur: usize, next: usize) -> bool {
        let Some(p) = prev else { return true };
        if self.lookup[cur] && p != next {
            return false;
        }
        self.sides[cur].iter().all(|s| (p == s[0] && next == s[1]) || (p == s[1] && next == s[0]))
    }
}
