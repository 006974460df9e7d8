//! Exact reductions before the MILP: distances that respect the pass-through
//! rules of C3/C4, a lower bound on the walk length, and which (table, step)
//! pairs can lie on any walk of at most n tables that visits all of T.
//!
//! Every reduction is a relaxation argument, so it never removes a feasible
//! walk: a walk that visits the relevant tables in some order t1, t2, … needs
//! at least d(t1,t2) + d(t2,t3) + … steps, where d is the length of the
//! shortest path whose interior never passes through a lookup (an interior
//! lookup occurrence X–L–X can be cut out of any valid walk) and passes
//! through a junction only from one side to the other (loop-erasing a valid
//! walk keeps that property). See docs/generate-view.md, "n bounds".

use std::time::Instant;

use super::problem::CoreProblem;

use super::distance::{cost_distances, held_karp, SUBSET_DP_MAX};
pub use super::distance::{distances, plain_distances, INF};

/// Distances from every relevant table, and the derived length bound.
#[derive(Debug, Clone)]
pub struct Bounds {
    /// Relevant nodes, in index order.
    pub rel: Vec<usize>,
    /// `from[k][i]`: distance from `rel[k]` to node `i`.
    pub from: Vec<Vec<u32>>,
    /// Lower bound on the number of tables of any valid walk (INF when two
    /// relevant tables cannot be connected).
    pub lower_nodes: u32,
    /// `held_karp[S][k]`: fewest steps of a walk covering relevant subset S
    /// and ending at `rel[k]` (metric closure); only when |T| ≤ 12.
    held_karp: Option<Vec<Vec<u32>>>,
}

impl Bounds {
    /// Compute distances and the lower bound.
    pub fn new(p: &CoreProblem) -> Self {
        let rel = p.relevant_nodes();
        let from: Vec<Vec<u32>> = rel.iter().map(|&t| distances(p, t)).collect();
        let k = rel.len();
        let mut lower_nodes = 1u32.max(k as u32);
        let mut held_karp = None;
        if k >= 2 {
            let mut worst = 0;
            for a in 0..k {
                for b in 0..k {
                    worst = worst.max(from[a][rel[b]]);
                }
            }
            if worst >= INF {
                return Bounds { rel, from, lower_nodes: INF, held_karp: None };
            }
            lower_nodes = lower_nodes.max(worst + 1);
            if k <= SUBSET_DP_MAX {
                let full = (1usize << k) - 1;
                let h = self::held_karp(k, |a, b| from[a][rel[b]]);
                let best = h[full].iter().copied().min().unwrap_or(INF);
                lower_nodes = lower_nodes.max(best.saturating_add(1));
                held_karp = Some(h);
            }
        }
        Bounds { rel, from, lower_nodes, held_karp }
    }

    /// Which steps `r` (index 0 = step 1) node `i` may occupy in a walk of at
    /// most `n` tables that visits every relevant table.
    pub fn allowed_steps(&self, i: usize, n: usize) -> Vec<bool> {
        let k = self.rel.len();
        let mut out = vec![false; n];
        if k == 0 {
            return out;
        }
        // Cheap necessary condition first: every relevant table within n-1 steps.
        if (0..k).any(|t| self.from[t][i] as usize >= n) {
            return out;
        }
        match &self.held_karp {
            Some(h) => {
                // a[S]: fewest steps of a walk covering S that ends at i.
                let full = (1usize << k) - 1;
                let mut a = vec![INF; full + 1];
                a[0] = 0;
                for s in 1..=full {
                    for t in 0..k {
                        if s & (1 << t) != 0 && h[s][t] < INF && self.from[t][i] < INF {
                            a[s] = a[s].min(h[s][t] + self.from[t][i]);
                        }
                    }
                }
                // g[x]: fewest steps for the rest, given a prefix of at most x steps.
                let mut g = vec![INF; n];
                for s in 0..=full {
                    let pre = a[s] as usize;
                    if pre < n {
                        g[pre] = g[pre].min(a[full ^ s]);
                    }
                }
                for x in 1..n {
                    g[x] = g[x].min(g[x - 1]);
                }
                for r in 0..n {
                    out[r] = (g[r] as usize) < INF as usize && g[r] as usize <= n - 1 - r;
                }
            }
            None => {
                for r in 0..n {
                    let room = r.max(n - 1 - r) as u32;
                    out[r] = (0..k).all(|t| self.from[t][i] <= room);
                }
            }
        }
        out
    }
}

/// Result of the reductions for one n.
#[derive(Debug, Clone)]
pub struct Pruned {
    /// `allowed[i][r]`: node i may be at step r+1.
    pub allowed: Vec<Vec<bool>>,
    /// Nodes with at least one allowed step.
    pub kept: usize,
    /// The reductions alone prove that no walk of at most n tables exists.
    pub infeasible: bool,
}

/// Fix b[i][r] = 0 wherever node i cannot be at step r of any walk of at
/// most `n` tables; repeated on the reduced graph until nothing changes.
pub fn prune(p: &CoreProblem, n: usize) -> Pruned {
    prune_until(p, n, None).expect("no deadline")
}

fn past(deadline: Option<Instant>) -> bool {
    deadline.is_some_and(|d| Instant::now() >= d)
}

/// [`prune`] under a deadline. Every intermediate state of the reductions is
/// sound (each removal is justified on its own), so when the deadline
/// passes the work done so far is returned; `None` only when not even the
/// first round's step bounds were computed.
pub fn prune_until(p: &CoreProblem, n: usize, deadline: Option<Instant>) -> Option<Pruned> {
    let mut cur = p.clone();
    let mut allowed: Vec<Vec<bool>> = Vec::new();
    let mut have = false;
    // A few rounds reach (nearly) the fixpoint; stopping early only keeps
    // more variables, never loses a walk.
    let mut rounds = 0;
    'rounds: loop {
        rounds += 1;
        if past(deadline) {
            break;
        }
        let b = Bounds::new(&cur);
        if b.lower_nodes as usize > n {
            return Some(Pruned { allowed: vec![vec![false; n]; p.len()], kept: 0, infeasible: true });
        }
        let mut next = Vec::with_capacity(cur.len());
        for i in 0..cur.len() {
            if i % 16 == 15 && past(deadline) {
                break 'rounds;
            }
            next.push(b.allowed_steps(i, n));
        }
        allowed = next;
        have = true;
        // Stepping rules: a node at step r needs an allowed neighbour at r-1
        // or r+1 (unless the walk is a single table).
        if n > 1 && b.rel.len() > 1 {
            loop {
                if past(deadline) {
                    break 'rounds;
                }
                let mut changed = false;
                for i in 0..cur.len() {
                    for r in 0..n {
                        if !allowed[i][r] {
                            continue;
                        }
                        let back = r > 0 && cur.adj[i].iter().any(|&j| allowed[j][r - 1]);
                        let fwd = r + 1 < n && cur.adj[i].iter().any(|&j| allowed[j][r + 1]);
                        if (r > 0 && !back) || (r == 0 && !fwd) {
                            allowed[i][r] = false;
                            changed = true;
                        }
                    }
                }
                if !changed {
                    break;
                }
            }
        }
        let dead: Vec<usize> = (0..cur.len()).filter(|&i| !allowed[i].iter().any(|&x| x)).collect();
        let newly_dead: Vec<usize> = dead.iter().copied().filter(|&i| !cur.adj[i].is_empty()).collect();
        if newly_dead.is_empty() || rounds >= 4 {
            break;
        }
        for &i in &newly_dead {
            let nb = std::mem::take(&mut cur.adj[i]);
            for j in nb {
                cur.adj[j].retain(|&x| x != i);
            }
        }
    }
    if !have {
        return None;
    }
    let infeasible = p.relevant_nodes().iter().any(|&t| !allowed[t].iter().any(|&x| x));
    let kept = allowed.iter().filter(|a| a.iter().any(|&x| x)).count();
    Some(Pruned { allowed, kept, infeasible })
}

/// With the optimal cost c* proved (by the exact search), drop every table
/// outside T that cannot lie on a walk of cost ≤ c*: a walk through i pays 1
/// for i, plus at least the cost-tour of the relevant tables visited before i
/// (ending next to i) and of those after it, in the metric closure of
/// "tables outside T strictly in between" distances. Only for |T| ≤ 12.
/// Returns how many tables were dropped.
pub fn prune_by_cost(p: &CoreProblem, c_star: usize, allowed: &mut [Vec<bool>]) -> usize {
    prune_by_cost_until(p, c_star, allowed, None)
}

/// [`prune_by_cost`] under a deadline: stops where it is when the deadline
/// passes (what was dropped stays dropped; every drop is sound).
pub fn prune_by_cost_until(
    p: &CoreProblem,
    c_star: usize,
    allowed: &mut [Vec<bool>],
    deadline: Option<Instant>,
) -> usize {
    let rel = p.relevant_nodes();
    let k = rel.len();
    if k == 0 || k > SUBSET_DP_MAX {
        return 0;
    }
    let cd: Vec<Vec<u32>> = rel.iter().map(|&t| cost_distances(p, t)).collect();
    let full = (1usize << k) - 1;
    let h = held_karp(k, |a, b| cd[b][rel[a]]);
    let mut dropped = 0;
    let mut a = vec![INF; full + 1];
    for i in 0..p.len() {
        if i % 16 == 15 && past(deadline) {
            break;
        }
        if p.relevant[i] || !allowed[i].iter().any(|&x| x) {
            continue;
        }
        a.iter_mut().for_each(|x| *x = INF);
        a[0] = 0;
        for s in 1..=full {
            for t in 0..k {
                if s & (1 << t) != 0 && h[s][t] < INF && cd[t][i] < INF {
                    a[s] = a[s].min(h[s][t] + cd[t][i]);
                }
            }
        }
        let lb = (0..=full).map(|s| a[s].saturating_add(a[full ^ s])).min().unwrap_or(INF);
        if lb >= INF || 1 + lb as usize > c_star {
            allowed[i].iter_mut().for_each(|x| *x = false);
            dropped += 1;
        }
    }
    dropped
}
