//! Distances on the core problem's graph, shared by the reductions
//! (`preprocess`) and the exact search (`exact`): BFS with and without the
//! C3/C4 pass-through rules, 0-1 BFS counting tables outside T, and the
//! Held–Karp subset DP over the relevant tables.

use std::collections::VecDeque;

use super::problem::CoreProblem;

/// "Unreachable".
pub const INF: u32 = u32::MAX / 4;

/// Relevant-set sizes up to this use the subset DP (Held–Karp); larger sets
/// fall back to pairwise distance bounds.
pub(crate) const SUBSET_DP_MAX: usize = 12;

/// Held–Karp over `k` relevant tables: `h[s][b]` is the cheapest chain that
/// covers exactly the subset `s` and was last extended by `b`, where
/// extending a chain whose last element is `a` by `b` costs `step(a, b)`
/// (`INF` for impossible). Callers choose the direction of `step`: the lower
/// bound reads chains forwards, the A* heuristic and the cost reduction read
/// them backwards (a tour *starting* at `b`). Exponential in `k`: callers
/// keep `k <= SUBSET_DP_MAX`.
pub(crate) fn held_karp(k: usize, step: impl Fn(usize, usize) -> u32) -> Vec<Vec<u32>> {
    let full = (1usize << k) - 1;
    let mut h = vec![vec![INF; k]; full + 1];
    for a in 0..k {
        h[1 << a][a] = 0;
    }
    for s in 1..=full {
        for a in 0..k {
            let cur = h[s][a];
            if cur >= INF || s & (1 << a) == 0 {
                continue;
            }
            for b in 0..k {
                if s & (1 << b) != 0 {
                    continue;
                }
                // INF is u32::MAX / 4, so the sum cannot overflow.
                let v = cur + step(a, b);
                let t = s | (1 << b);
                if v < h[t][b] {
                    h[t][b] = v;
                }
            }
        }
    }
    h
}

/// Shortest distances from `src` in steps, with the C3/C4 pass-through rules
/// on interior nodes (the source itself may be left in any direction).
pub fn distances(p: &CoreProblem, src: usize) -> Vec<u32> {
    let n = p.len();
    let mut dist = vec![INF; n];
    // Junction nodes are settled per predecessor: where a walk may go next
    // depends on where it came from.
    let mut jseen: Vec<Vec<usize>> = vec![Vec::new(); n];
    // Active junctions, once: `is_active_junction` scans every m:m pattern,
    // which per visited edge made this O(E·J) (0.5 s on 10,000 tables).
    let mut is_junction = vec![false; n];
    if p.c3 {
        for j in &p.junctions {
            if j.k < n {
                is_junction[j.k] = true;
            }
        }
    }
    let mut q = VecDeque::new();
    dist[src] = 0;
    q.push_back((src, usize::MAX, 0u32));
    while let Some((u, pred, du)) = q.pop_front() {
        let interior = u != src || pred != usize::MAX;
        if interior && p.is_active_lookup(u) {
            continue;
        }
        let junction = interior && is_junction[u];
        for &v in &p.adj[u] {
            if junction && !p.step_allowed(Some(pred), u, v) {
                continue;
            }
            if v == src {
                continue;
            }
            if is_junction[v] {
                if jseen[v].contains(&u) {
                    continue;
                }
                jseen[v].push(u);
                if du + 1 < dist[v] {
                    dist[v] = du + 1;
                }
                q.push_back((v, u, du + 1));
            } else if dist[v] == INF {
                dist[v] = du + 1;
                q.push_back((v, u, du + 1));
            }
        }
    }
    dist
}

/// Plain BFS distances (no C3/C4 rules); consistent heuristic for A*.
pub fn plain_distances(p: &CoreProblem, src: usize) -> Vec<u32> {
    bfs(p, src, false)
}

/// [`plain_distances`] without passing through an active lookup (C4): a
/// shortest valid path never enters a lookup and turns back, so this is
/// still a lower bound on any walk's steps from `src`, and a much tighter
/// one where lookups are hubs (enterprise schemas).
pub fn plain_distances_c4(p: &CoreProblem, src: usize) -> Vec<u32> {
    bfs(p, src, true)
}

/// BFS from `src`; with `c4`, an active lookup other than `src` is never an
/// interior table.
fn bfs(p: &CoreProblem, src: usize, c4: bool) -> Vec<u32> {
    let mut dist = vec![INF; p.len()];
    let mut q = VecDeque::new();
    dist[src] = 0;
    q.push_back(src);
    while let Some(u) = q.pop_front() {
        if c4 && u != src && p.is_active_lookup(u) {
            continue;
        }
        for &v in &p.adj[u] {
            if dist[v] == INF {
                dist[v] = dist[u] + 1;
                q.push_back(v);
            }
        }
    }
    dist
}

/// [`cost_distances`] without passing through an active lookup (C4); a
/// lower bound for the same reason as [`plain_distances_c4`].
pub fn cost_distances_c4(p: &CoreProblem, t: usize) -> Vec<u32> {
    zero_one_towards(p, t, true)
}

/// Fewest tables outside T strictly after `a` on a path from `a` to `t`
/// (0-1 BFS towards `t`).
pub fn cost_distances(p: &CoreProblem, t: usize) -> Vec<u32> {
    zero_one_towards(p, t, false)
}

/// 0-1 BFS towards `t`; with `c4`, an active lookup other than `t` is never
/// an interior table.
fn zero_one_towards(p: &CoreProblem, t: usize, c4: bool) -> Vec<u32> {
    let mut dist = vec![INF; p.len()];
    let mut dq = VecDeque::new();
    dist[t] = 0;
    dq.push_back(t);
    while let Some(v) = dq.pop_front() {
        if c4 && v != t && p.is_active_lookup(v) {
            continue;
        }
        // Stepping a -> v costs [v not in T].
        let w = (!p.relevant[v]) as u32;
        for &a in &p.adj[v] {
            let nd = dist[v] + w;
            if nd < dist[a] {
                dist[a] = nd;
                if w == 0 {
                    dq.push_front(a);
                } else {
                    dq.push_back(a);
                }
            }
        }
    }
    dist
}
