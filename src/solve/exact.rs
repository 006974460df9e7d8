//! The combinatorial exact solver: a shortest-path search over walk states
//! (node, predecessor where C3/C4 need it, relevant tables visited, m:m
//! bookkeeping) ordered by the lexicographic objective (cost, length).
//!
//! Because the objective is additive and the state captures everything the
//! constraints look at, the first accepting state popped is optimal over
//! walks of *any* length: this is what proves the MILP's n sufficient. With
//! `max_len` the length joins the state and the search is the layered DP
//! over walks of at most that many tables (the brute-force suites compare it
//! with the MILP at the same n).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap as HashMap;
use std::time::Instant;

pub use super::distance::cost_distances;
use super::distance::{INF, SUBSET_DP_MAX};
use super::heuristic::Heuristic;
use super::problem::{CoreProblem, StepRules};

/// Outcome of the exact search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExactOutcome {
    /// Optimal walk (node indices), with its (cost, length).
    Optimal { walk: Vec<usize>, cost: usize, len: usize },
    /// Every state was explored: no valid walk exists (of any length, or of
    /// at most `max_len` tables).
    Infeasible,
    /// The state budget, the deadline or the bookkeeping limits were hit.
    GaveUp(String),
    /// Gave up as `GaveUp`, holding a valid walk that is not proven optimal
    /// (the quick walk of [`super::incumbent`], tried for relevant sets above
    /// the Held–Karp size), with its (cost, length).
    Incumbent { walk: Vec<usize>, cost: usize, len: usize, reason: String },
}

/// Limits of the search.
#[derive(Debug, Clone, Copy)]
pub struct ExactLimits {
    pub max_states: usize,
    pub deadline: Option<Instant>,
    /// Large requests: states explored before the weighted pass improves the
    /// incumbent (most are proved before that and skip it; tests set 1).
    pub weighted_after: usize,
}

impl ExactLimits {
    /// `max_states` and `deadline`, the rest as by default.
    pub fn new(max_states: usize, deadline: Option<Instant>) -> Self {
        ExactLimits { max_states, deadline, ..Self::default() }
    }
}

impl Default for ExactLimits {
    fn default() -> Self {
        ExactLimits { max_states: 2_000_000, deadline: None, weighted_after: WEIGHTED_AFTER }
    }
}

const NONE: u32 = u32::MAX;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct State {
    node: u32,
    prev: u32,
    len: u32,
    mask: u64,
    /// The C3 bookkeeping, interned in [`C3Book`].
    jst: u32,
}

/// Solve exactly. `max_len`: only walks of at most that many tables.
pub fn solve_exact(p: &CoreProblem, max_len: Option<usize>, limits: ExactLimits) -> ExactOutcome {
    search(p, max_len, limits, Mode::Exact, None)
}

/// The same search without the A* lower bounds (plain Dijkstra over walk
/// states): slow, but with nothing to get wrong in the bounds, so the
/// solver tests use it as the referee where brute force is out of reach
/// (relevant sets above the Held–Karp size).
pub fn solve_exact_blind(p: &CoreProblem, max_len: Option<usize>, limits: ExactLimits) -> ExactOutcome {
    search(p, max_len, limits, Mode::Blind, None)
}

/// How [`search`] orders and bounds states.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// A* with the lower bounds: exact.
    Exact,
    /// No bounds (Dijkstra): exact, slow; the solver tests' referee.
    Blind,
    /// Weighted A* (twice the bounds): the first accepted walk is valid but
    /// not proven optimal; a quick incumbent for large requests.
    Weighted,
}

/// State budget of the weighted pass that improves the incumbent.
const WEIGHTED_STATES: usize = 200_000;

/// States the exact search explores before it runs the weighted pass (most
/// large requests are proved before that, and skip it).
const WEIGHTED_AFTER: usize = 20_000;

/// `given`: the bounds when the caller already built them (the weighted
/// pass reuses its exact search's).
fn search(
    p: &CoreProblem,
    max_len: Option<usize>,
    limits: ExactLimits,
    mode: Mode,
    given: Option<&Heuristic>,
) -> ExactOutcome {
    let bounds = mode != Mode::Blind;
    let weight = if mode == Mode::Weighted { 2 } else { 1 };
    let rel = p.relevant_nodes();
    if rel.len() > 64 {
        return ExactOutcome::GaveUp("more than 64 relevant tables".into());
    }
    if rel.is_empty() {
        return ExactOutcome::Infeasible;
    }
    let n = p.len();
    let mut bit = vec![0u64; n];
    for (k, &t) in rel.iter().enumerate() {
        bit[t] = 1u64 << k;
    }
    let full: u64 = if rel.len() == 64 { u64::MAX } else { (1u64 << rel.len()) - 1 };
    // Needs the predecessor remembered: C4 lookups and C3 junctions (and
    // C3's bridges, [`C3Book::settle`]).
    let rules = StepRules::new(p);
    // A* heuristic, lexicographic (cost, length), admissible (consistent
    // along edges for small requests; the large-request bounds may not be,
    // and a state reached again more cheaply is expanded again): the
    // remaining walk visits every unvisited relevant table, so it needs at
    // least the cheapest tour over them in the metric closure of the
    // distances (length) and of "tables outside T in between" (cost).
    let own = (bounds && given.is_none()).then(|| Heuristic::new(p, &rules, &rel, is_large(p, rel.len())));
    let heur: Option<&Heuristic> = given.or(own.as_ref());
    let h = |node: usize, mask: u64| -> (u32, u32) { heur.map_or((0, 0), |h| h.eval(node, full & !mask)) };
    let mut book = C3Book::new(p);
    // Enterprise-sized requests: a quick valid walk bounds the search from
    // above (states that cannot beat it are not stored) and is the answer,
    // unproven, if the search runs out. Smaller requests skip it, so their
    // search (and which of several optimal walks it returns) is unchanged.
    let large = bounds && max_len.is_none() && is_large(p, rel.len());
    let with_incumbent = large && mode == Mode::Exact;
    let mut incumbent = if with_incumbent { super::incumbent::greedy_walk(p, rel.len()) } else { None };
    let mut ub: Option<(u32, u32)> = incumbent.as_ref().map(|w| (w.1 as u32, w.2 as u32));
    // A search still running after `WEIGHTED_AFTER` states also gets a
    // weighted A* pass's walk as incumbent, when it is better.
    let mut weighted_pending = with_incumbent;
    // Large requests also bound what C3 still asks (and drop states C3 can
    // no longer accept), and never enter a dangling branch without relevant
    // tables (an optimal walk has no reason to; at hubs, most neighbours
    // are such branches).
    let c3_bound = large && p.c3 && !p.junctions.is_empty();
    let dead = if large { dangling(p, &rules) } else { vec![false; n] };

    // (cost + hc, len + hl, deeper first, cost, len)
    type Key = (u32, u32, u32, u32, u32);
    let mut heap: BinaryHeap<Reverse<(Key, usize)>> = BinaryHeap::new();
    let mut states: Vec<State> = Vec::new();
    let mut parent: Vec<usize> = Vec::new();
    let mut best: HashMap<State, (u32, u32)> = HashMap::default();
    let bounded = max_len.is_some();
    let cap = max_len.unwrap_or(usize::MAX) as u32;
    for s in 0..n {
        if cap == 0 {
            break;
        }
        if dead[s] {
            continue;
        }
        let st = State {
            node: s as u32,
            prev: NONE,
            len: if bounded { 1 } else { 0 },
            mask: bit[s],
            jst: book.enter(0, s, true),
        };
        let cost = (!p.relevant[s]) as u32;
        let hv = h(s, st.mask);
        if hv.0 >= INF || hv.1 >= INF {
            continue;
        }
        if best.get(&st).is_some_and(|&b| b <= (cost, 1)) {
            continue;
        }
        best.insert(st, (cost, 1));
        states.push(st);
        parent.push(usize::MAX);
        heap.push(Reverse(((cost + weight * hv.0, 1 + weight * hv.1, u32::MAX - 1, cost, 1), states.len() - 1)));
    }
    let mut popped = 0usize;
    // The bound reached so far (every walk cheaper than it is ruled out).
    let mut reached = (0u32, 0u32);
    let why = |incumbent: Option<(Vec<usize>, usize, usize)>, what: String, popped: usize, reached: (u32, u32)| {
        let reason = format!(
            "{what} after {popped} states (every walk costs at least {} with length {}, lexicographically)",
            reached.0, reached.1
        );
        match incumbent {
            Some((walk, cost, len)) => ExactOutcome::Incumbent { walk, cost, len, reason },
            None => ExactOutcome::GaveUp(reason),
        }
    };
    while let Some(Reverse(((fc, fl, _, cost, len), idx))) = heap.pop() {
        let st = states[idx];
        if best.get(&st).is_some_and(|&b| b < (cost, len)) {
            continue;
        }
        // Every state left is bounded below by more than the incumbent
        // (admissible bounds): the incumbent is optimal.
        if ub.is_some_and(|b| (fc, fl) > b) {
            break;
        }
        popped += 1;
        if popped > limits.max_states {
            return why(incumbent, format!("state budget of {} exhausted", limits.max_states), popped - 1, reached);
        }
        if popped.is_multiple_of(1024) && limits.deadline.is_some_and(|d| Instant::now() >= d) {
            return why(incumbent, "time limit".into(), popped, reached);
        }
        if weighted_pending && popped >= limits.weighted_after {
            // The weighted pass: the same search with twice the bounds
            // settles for the first valid walk it meets, usually far closer
            // to the optimum than the nearest-first walk, so far fewer
            // states are stored from here on.
            weighted_pending = false;
            let quick = ExactLimits::new(WEIGHTED_STATES, limits.deadline);
            if let ExactOutcome::Optimal { walk, cost, len } = search(p, None, quick, Mode::Weighted, heur) {
                if ub.is_none_or(|b| (cost as u32, len as u32) < b) {
                    ub = Some((cost as u32, len as u32));
                    incumbent = Some((walk, cost, len));
                }
            }
        }
        reached = reached.max((fc, fl));
        if st.mask == full && book.accept(st.jst, st.node as usize) {
            let mut walk = Vec::new();
            let mut i = idx;
            while i != usize::MAX {
                walk.push(states[i].node as usize);
                i = parent[i];
            }
            walk.reverse();
            return ExactOutcome::Optimal { walk, cost: cost as usize, len: len as usize };
        }
        if len >= cap {
            continue;
        }
        let u = st.node as usize;
        let prev = if st.prev == NONE { None } else { Some(st.prev as usize) };
        for &v in &p.adj[u] {
            if dead[v] || (rules.special(u) && !rules.allowed(prev, u, v)) {
                continue;
            }
            let mask = st.mask | bit[v];
            let mut hv = h(v, mask);
            if hv.0 >= INF || hv.1 >= INF {
                continue;
            }
            let mut jst = book.enter(st.jst, v, false);
            if let (true, Some(pr)) = (book.bridge(u), prev) {
                jst = book.settle(jst, pr, u, v);
            }
            if c3_bound {
                // What C3 still asks, where it asks more than the tour.
                match book.pending(jst, v) {
                    None => continue,
                    Some(c) => hv = (hv.0.max(c.0), hv.1.max(c.1)),
                }
            }
            let ns = State {
                node: v as u32,
                prev: if rules.special(v) || book.bridge(v) { u as u32 } else { 0 },
                len: if bounded { len + 1 } else { 0 },
                mask,
                jst,
            };
            let nc = cost + (!p.relevant[v]) as u32;
            let nl = len + 1;
            if ub.is_some_and(|b| (nc + hv.0, nl + hv.1) > b) {
                continue;
            }
            if best.get(&ns).is_some_and(|&b| b <= (nc, nl)) {
                continue;
            }
            best.insert(ns, (nc, nl));
            states.push(ns);
            parent.push(idx);
            heap.push(Reverse(((nc + weight * hv.0, nl + weight * hv.1, u32::MAX - nl, nc, nl), states.len() - 1)));
        }
    }
    // Every walk at most as good as the quick one was explored: it is optimal.
    match incumbent {
        Some((walk, cost, len)) => ExactOutcome::Optimal { walk, cost, len },
        None => ExactOutcome::Infeasible,
    }
}

/// C3's bookkeeping for the walk states, interned so a state stays `Copy`
/// and the number of m:m patterns in the graph is not limited: a context id
/// stands for the sorted set of facts C3 reads at the end of a walk — which
/// sides of m:m patterns were visited, which junctions occurred once
/// (so far interior) or unusably (twice, or first in the walk), and which
/// groups of patterns a bridge settled (C3 case c: a step side → bridge →
/// other side). A walk touches few of them, however many patterns the
/// schema has.
struct C3Book<'a> {
    p: &'a CoreProblem,
    /// Per node: the m:m patterns it is a side of.
    side_of: Vec<Vec<usize>>,
    /// Per node: the m:m patterns it is the junction of.
    junction_of: Vec<Vec<usize>>,
    /// Per pattern: its group, the patterns between the same two sides
    /// ([`CoreProblem::junction_group`], computed once: the search reads it
    /// for every state it stores).
    group: Vec<Vec<usize>>,
    /// Per node: the side pairs it bridges ([`super::problem::Bridge`]),
    /// each with its group's id (the group's first pattern).
    bridge_of: Vec<Vec<([usize; 2], usize)>>,
    /// Per pattern: the cheapest bridge of its sides, 0 or 1 (not relevant),
    /// `None` without one.
    bridge_cost: Vec<Option<u32>>,
    /// Context id -> its sorted facts (`node << 2 | kind`; for `SETTLED`,
    /// `group id << 2 | kind`).
    sets: Vec<Vec<u32>>,
    ids: HashMap<Vec<u32>, u32>,
    /// (context, node, first) -> context after entering the node.
    next: HashMap<(u32, u32, bool), u32>,
    /// (context, group id) -> context with the group settled.
    settled_next: HashMap<(u32, u32), u32>,
}

/// Fact kinds: a side was visited; a junction occurred once; a junction
/// occurred unusably; a group of patterns was settled by a bridge between
/// its sides.
const SIDE: u32 = 0;
const ONCE: u32 = 1;
const BAD: u32 = 2;
const SETTLED: u32 = 3;

impl<'a> C3Book<'a> {
    fn new(p: &'a CoreProblem) -> Self {
        let n = p.len();
        let mut side_of = vec![Vec::new(); n];
        let mut junction_of = vec![Vec::new(); n];
        if p.c3 {
            for (q, j) in p.junctions.iter().enumerate() {
                if j.k < n && j.sides.iter().all(|&s| s < n) {
                    junction_of[j.k].push(q);
                    side_of[j.sides[0]].push(q);
                    if j.sides[1] != j.sides[0] {
                        side_of[j.sides[1]].push(q);
                    }
                }
            }
        }
        let group = p.junction_groups();
        let mut bridge_of: Vec<Vec<([usize; 2], usize)>> = vec![Vec::new(); n];
        let mut bridge_cost: Vec<Option<u32>> = vec![None; p.junctions.len()];
        if p.c3 {
            for (q, j) in p.junctions.iter().enumerate() {
                if j.sides[0] == j.sides[1] {
                    continue;
                }
                for b in p.bridges.iter().filter(|b| b.t < n && b.between(j.sides[0], j.sides[1])) {
                    let c = (!p.relevant[b.t]) as u32;
                    bridge_cost[q] = Some(bridge_cost[q].map_or(c, |o| o.min(c)));
                    if !bridge_of[b.t].iter().any(|&(_, g)| g == group[q][0]) {
                        bridge_of[b.t].push((b.sides, group[q][0]));
                    }
                }
            }
        }
        let mut ids = HashMap::default();
        ids.insert(Vec::new(), 0);
        C3Book {
            p,
            side_of,
            junction_of,
            group,
            bridge_of,
            bridge_cost,
            sets: vec![Vec::new()],
            ids,
            next: HashMap::default(),
            settled_next: HashMap::default(),
        }
    }

    /// Whether `t` bridges the sides of some pattern (the search then
    /// remembers what came before it).
    fn bridge(&self, t: usize) -> bool {
        !self.bridge_of[t].is_empty()
    }

    /// The context after the step `prev → t → next`: the group of the
    /// pattern between `prev` and `next` is settled when `t` bridges them.
    fn settle(&mut self, ctx: u32, prev: usize, t: usize, next: usize) -> u32 {
        let mut ctx = ctx;
        for i in 0..self.bridge_of[t].len() {
            let ([a, b], g) = self.bridge_of[t][i];
            if !((prev, next) == (a, b) || (prev, next) == (b, a)) || self.has(ctx, g, SETTLED) {
                continue;
            }
            if let Some(&c) = self.settled_next.get(&(ctx, g as u32)) {
                ctx = c;
                continue;
            }
            let mut set = self.sets[ctx as usize].clone();
            let f = (g as u32) << 2 | SETTLED;
            if let Err(i) = set.binary_search(&f) {
                set.insert(i, f);
            }
            let id = self.intern(set);
            self.settled_next.insert((ctx, g as u32), id);
            ctx = id;
        }
        ctx
    }

    /// The id of a sorted fact set.
    fn intern(&mut self, set: Vec<u32>) -> u32 {
        match self.ids.get(&set) {
            Some(&id) => id,
            None => {
                let id = self.sets.len() as u32;
                self.ids.insert(set.clone(), id);
                self.sets.push(set);
                id
            }
        }
    }

    /// Whether a bridge settled pattern `q`'s group.
    fn settled(&self, ctx: u32, q: usize) -> bool {
        self.bridge_cost[q].is_some() && self.has(ctx, self.group[q][0], SETTLED)
    }

    fn has(&self, ctx: u32, node: usize, kind: u32) -> bool {
        self.sets[ctx as usize].binary_search(&((node as u32) << 2 | kind)).is_ok()
    }

    /// The context after the walk enters `v` (`first`: as its first table).
    fn enter(&mut self, ctx: u32, v: usize, first: bool) -> u32 {
        if self.side_of[v].is_empty() && self.junction_of[v].is_empty() {
            return ctx;
        }
        if let Some(&c) = self.next.get(&(ctx, v as u32, first)) {
            return c;
        }
        let mut set = self.sets[ctx as usize].clone();
        let fact = |kind: u32| (v as u32) << 2 | kind;
        let add = |set: &mut Vec<u32>, f: u32| {
            if let Err(i) = set.binary_search(&f) {
                set.insert(i, f);
            }
        };
        if !self.side_of[v].is_empty() {
            add(&mut set, fact(SIDE));
        }
        if !self.junction_of[v].is_empty() {
            let once = set.binary_search(&fact(ONCE));
            if first || once.is_ok() || set.binary_search(&fact(BAD)).is_ok() {
                if let Ok(i) = once {
                    set.remove(i);
                }
                add(&mut set, fact(BAD));
            } else {
                add(&mut set, fact(ONCE));
            }
        }
        let id = self.intern(set);
        self.next.insert((ctx, v as u32, first), id);
        id
    }

    /// The m:m patterns whose two sides the walk in context `ctx` visited
    /// (each once, found from its first side).
    fn both_sides_visited(&self, ctx: u32) -> impl Iterator<Item = usize> + '_ {
        self.sets[ctx as usize].iter().filter(|&&f| f & 3 == SIDE).flat_map(move |&f| {
            let v = (f >> 2) as usize;
            self.side_of[v].iter().copied().filter(move |&q| {
                let j = &self.p.junctions[q];
                j.sides[0] == v && self.has(ctx, j.sides[1], SIDE)
            })
        })
    }

    /// What C3 still asks of a walk in context `ctx` now at `last`, as a
    /// (cost, length) lower bound on the rest of it: every m:m pattern with
    /// both sides visited, no junction of its group once and interior and
    /// no bridge triple settling it needs a table of its own: a junction
    /// occurrence or a bridge triple `a → t → b`, both centred on one
    /// position whose neighbours are the one pair of sides they settle, so
    /// distinct groups need distinct centres and each needs the table after
    /// its centre (length 1). The centre is new (cost: its cheapest junction
    /// or bridge outside T) unless it is `last` itself, a bridge of the
    /// group (cost 0: the next step can settle it). `None` when the
    /// walk can never be accepted: a junction occurred unusably between
    /// sides that are both visited, or that will be (the other side is
    /// relevant and still ahead).
    fn pending(&self, ctx: u32, last: usize) -> Option<(u32, u32)> {
        for &f in self.sets[ctx as usize].iter().filter(|&&f| f & 3 == BAD) {
            let k = (f >> 2) as usize;
            for &q in &self.junction_of[k] {
                let [a, b] = self.p.junctions[q].sides;
                let (va, vb) = (self.has(ctx, a, SIDE), self.has(ctx, b, SIDE));
                if (va && (vb || self.p.relevant[b])) || (vb && self.p.relevant[a]) {
                    return None;
                }
            }
        }
        let mut need = (0u32, 0u32);
        let mut counted: Vec<usize> = Vec::new();
        for q in self.both_sides_visited(ctx) {
            let j = &self.p.junctions[q];
            if self.has(ctx, j.k, ONCE) {
                if last == j.k {
                    // It has to be left, to a side.
                    need.1 = need.1.max(1);
                }
                continue;
            }
            let group = &self.group[q];
            if group
                .iter()
                .any(|&o| o != q && self.has(ctx, self.p.junctions[o].k, ONCE) && last != self.p.junctions[o].k)
            {
                continue;
            }
            if self.settled(ctx, q) || counted.contains(&group[0]) {
                continue;
            }
            counted.push(group[0]);
            let junction = group.iter().map(|&o| (!self.p.relevant[self.p.junctions[o].k]) as u32).min().unwrap_or(1);
            let cost = if self.bridge_of[last].iter().any(|&(_, g)| g == group[0]) {
                0
            } else {
                self.bridge_cost[q].map_or(junction, |b| b.min(junction))
            };
            need = (need.0 + cost, need.1 + 1);
        }
        Some(need)
    }

    /// C3 at the end of a walk in context `ctx` that ends at `last`: for
    /// each m:m pattern with both sides visited, its junction occurred once
    /// and interior, or (not occurring) another junction between the same
    /// sides did or a bridge settled their group.
    fn accept(&self, ctx: u32, last: usize) -> bool {
        let interior_once = |k: usize| self.has(ctx, k, ONCE) && last != k;
        for q in self.both_sides_visited(ctx) {
            let j = &self.p.junctions[q];
            if self.has(ctx, j.k, BAD) || (self.has(ctx, j.k, ONCE) && last == j.k) {
                return false;
            }
            if !self.has(ctx, j.k, ONCE)
                && !self.group[q].iter().any(|&o| o != q && interior_once(self.p.junctions[o].k))
                && !self.settled(ctx, q)
            {
                return false;
            }
        }
        true
    }
}

/// Graphs with more tables than this (after scoping) count as
/// enterprise-sized whatever the relevant set's size.
const LARGE_GRAPH: usize = 2_000;

/// Whether a request gets the large-request treatment: the C4-aware bounds
/// with MST and Held–Karp over a part, and the quick incumbent walk. Curated
/// models' requests (small graphs, at most `SUBSET_DP_MAX` relevant tables)
/// keep the plain search, so which of several optimal walks they get is
/// unchanged.
fn is_large(p: &CoreProblem, relevant: usize) -> bool {
    relevant > SUBSET_DP_MAX || p.len() > LARGE_GRAPH
}

/// The tables in dangling branches without relevant tables, which an optimal
/// walk never enters: peeled like leaves of a tree, a table outside T with
/// at most one unpeeled neighbour. A walk entering such a branch leaves it
/// the way it came, through the branch's attachment table X, so cutting
/// those excursions (and the repeated X) gives a valid walk at most as
/// long and no more costly: X is neither a lookup nor a junction (C3/C4
/// care what comes before and after those), no junction is peeled or
/// adjacent to a peeled table (C3 counts junction occurrences), and what
/// the cut removes from C3's view are side visits only, which can lift an
/// obligation but never create one. A bridge triple `a → t → b` the cut
/// breaks has a peeled table among `a`, `t`, `b`, hence a peeled side
/// (a peeled bridge had at most one unpeeled side when it was peeled), and
/// every visit of a peeled side is cut: its pattern asks nothing any more.
fn dangling(p: &CoreProblem, rules: &StepRules) -> Vec<bool> {
    let n = p.len();
    let mut deg: Vec<usize> = p.adj.iter().map(|a| a.len()).collect();
    let mut dead = vec![false; n];
    let peelable = |v: usize, dead: &[bool], deg: &[usize]| -> bool {
        !dead[v]
            && deg[v] <= 1
            && !p.relevant[v]
            && !rules.junction(v)
            && p.adj[v].iter().all(|&x| !rules.junction(x) && (dead[x] || !rules.lookup(x)))
    };
    let mut stack: Vec<usize> = (0..n).filter(|&v| peelable(v, &dead, &deg)).collect();
    while let Some(v) = stack.pop() {
        if !peelable(v, &dead, &deg) {
            continue;
        }
        dead[v] = true;
        for &x in &p.adj[v] {
            if !dead[x] {
                deg[x] -= 1;
                if peelable(x, &dead, &deg) {
                    stack.push(x);
                }
            }
        }
    }
    dead
}

#[cfg(test)]
mod tests {
    use super::*;

    /// C3 case c in the bookkeeping: sides 0*, 1* (relevant), junction 2,
    /// bridge 3 (neither relevant), and 0 - 1 directly. The walk's context
    /// is built step by step as the search does; `pending` must stay a
    /// lower bound on what the cheapest completion still adds (cost, length).
    #[test]
    fn a_bridge_between_the_sides_settles_their_pattern() {
        use super::super::problem::{Bridge, MmJunction};
        let mut p = CoreProblem::new(4, &[(0, 2), (2, 1), (0, 3), (3, 1), (0, 1)]);
        p.relevant[0] = true;
        p.relevant[1] = true;
        p.junctions.push(MmJunction { k: 2, sides: [0, 1] });
        p.bridges.push(Bridge { t: 3, sides: [0, 1] });
        let mut book = C3Book::new(&p);
        let walk_ctx = |book: &mut C3Book, walk: &[usize]| {
            let mut ctx = book.enter(0, walk[0], true);
            for i in 1..walk.len() {
                ctx = book.enter(ctx, walk[i], false);
                if i >= 2 && book.bridge(walk[i - 1]) {
                    ctx = book.settle(ctx, walk[i - 2], walk[i - 1], walk[i]);
                }
            }
            ctx
        };
        // 0 → 3 → 1 (and back): settled, nothing pending.
        for w in [[0, 3, 1], [1, 3, 0]] {
            let c = walk_ctx(&mut book, &w);
            assert!(book.accept(c, w[2]), "{w:?}");
            assert_eq!(book.pending(c, w[2]), Some((0, 0)), "{w:?}");
            assert_eq!(p.violation(&w), None);
        }
        // 0 → 1: the cheapest completion is 1 → 3 → 0 or 1 → 2 → 0 (cost 1, length 2).
        let c = walk_ctx(&mut book, &[0, 1]);
        assert!(!book.accept(c, 1));
        assert_eq!(book.pending(c, 1), Some((1, 1)));
        // 0 → 1 → 3: the next step 3 → 0 settles it (cost 0, length 1).
        let c = walk_ctx(&mut book, &[0, 1, 3]);
        assert!(!book.accept(c, 3));
        assert_eq!(book.pending(c, 3), Some((0, 1)));
        let c = walk_ctx(&mut book, &[0, 1, 3, 0]);
        assert!(book.accept(c, 0));
        assert_eq!(book.pending(c, 0), Some((0, 0)));
        // 0 → 3 → 0 → 1 passes the bridge but not between the sides.
        let c = walk_ctx(&mut book, &[0, 3, 0, 1]);
        assert!(!book.accept(c, 1));
        assert!(p.violation(&[0, 3, 0, 1]).is_some());
        // A junction that occurs still occurs once, interior: 2 → 0 → 3 → 1
        // (the junction first) is rejected although the bridge settles.
        let c = walk_ctx(&mut book, &[2, 0, 3, 1]);
        assert!(!book.accept(c, 1));
        assert_eq!(book.pending(c, 1), None);
        assert!(p.violation(&[2, 0, 3, 1]).is_some());
        // The search itself: 0 → 3 → 1 and 0 → 2 → 1 both cost 1; with 3
        // relevant, only the bridge is free.
        p.relevant[3] = true;
        match solve_exact(&p, None, ExactLimits::default()) {
            ExactOutcome::Optimal { walk, cost, len } => assert_eq!((walk.len(), cost, len), (3, 0, 3), "{walk:?}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn dangling_branches_are_peeled_but_not_next_to_lookups_or_junctions() {
        // 0* - 1 - 2* with branches: 1 - 3 - 4 (dangling, peeled);
        // 2 - 5 (lookup) - 6 (kept: it hangs off a lookup);
        // 0 - 7 (junction of 0 and 8) - 8 - 9 (8 hangs off a junction: kept; 9 peeled).
        let mut p = CoreProblem::new(10, &[(0, 1), (1, 2), (1, 3), (3, 4), (2, 5), (5, 6), (0, 7), (7, 8), (8, 9)]);
        p.relevant[0] = true;
        p.relevant[2] = true;
        p.lookup[5] = true;
        p.junctions.push(super::super::problem::MmJunction { k: 7, sides: [0, 8] });
        let dead = dangling(&p, &StepRules::new(&p));
        let peeled: Vec<usize> = (0..10).filter(|&v| dead[v]).collect();
        assert_eq!(peeled, vec![3, 4, 9]);
    }
}
