//! Distances on the core problem's graph, shared by the reductions
//! (`preprocess`) and the exact search (`exact`): BFS with and without the
//! C3/C4 pass-through rules, 0-1 BFS counting tables outside T, and the
//! Held–Karp subset DP over the relevant tables.

use std::collections::VecDeque;

use super::problem::{CoreProblem, StepRules};

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
    let mut dist = vec![INF; p.len()];
    let mut q = VecDeque::new();
    dist[src] = 0;
    q.push_back(src);
    while let Some(u) = q.pop_front() {
        for &v in &p.adj[u] {
            if dist[v] == INF {
                dist[v] = dist[u] + 1;
                q.push_back(v);
            }
        }
    }
    dist
}

/// Fewest tables outside T strictly after `a` on a path from `a` to `t`
/// (0-1 BFS towards `t`).
pub fn cost_distances(p: &CoreProblem, t: usize) -> Vec<u32> {
    zero_one_towards(p, t, None)
}

/// [`cost_distances`] with the C3/C4 pass-through rules on interior tables,
/// as [`distances`] has them for steps: fewest tables outside T strictly
/// after `a` on a path from `a` to `t` whose interior never passes through
/// a lookup and crosses a junction only between its two sides. The rules
/// are symmetric, so searching outwards from `t` finds the same paths.
pub fn cost_distances_rules(p: &CoreProblem, rules: &StepRules, t: usize) -> Vec<u32> {
    zero_one_towards(p, t, Some(rules))
}

/// 0-1 BFS towards `t`, with the pass-through `rules` on interior tables
/// when given.
fn zero_one_towards(p: &CoreProblem, t: usize, rules: Option<&StepRules>) -> Vec<u32> {
    let n = p.len();
    let junction = |v: usize| rules.is_some_and(|r| r.junction(v));
    let mut dist = vec![INF; n];
    // Junctions are settled per predecessor, as in `distances`.
    let mut jbest: Vec<Vec<(usize, u32)>> = vec![Vec::new(); n];
    let mut dq = VecDeque::new();
    dist[t] = 0;
    dq.push_back((t, usize::MAX, 0u32));
    while let Some((v, pred, dv)) = dq.pop_front() {
        let stale = if junction(v) && pred != usize::MAX {
            jbest[v].iter().any(|&(q, d)| q == pred && d < dv)
        } else {
            dv > dist[v]
        };
        if stale {
            continue;
        }
        let interior = v != t;
        if interior && rules.is_some_and(|r| r.lookup(v)) {
            continue;
        }
        // Stepping a -> v costs [v not in T].
        let w = (!p.relevant[v]) as u32;
        let nd = dv + w;
        for &a in &p.adj[v] {
            if a == t || (interior && junction(v) && !rules.is_some_and(|r| r.allowed(Some(pred), v, a))) {
                continue;
            }
            if junction(a) {
                match jbest[a].iter_mut().find(|e| e.0 == v) {
                    Some(e) if e.1 <= nd => continue,
                    Some(e) => e.1 = nd,
                    None => jbest[a].push((v, nd)),
                }
                dist[a] = dist[a].min(nd);
            } else if nd < dist[a] {
                dist[a] = nd;
            } else {
                continue;
            }
            if w == 0 {
                dq.push_front((a, v, nd));
            } else {
                dq.push_back((a, v, nd));
            }
        }
    }
    dist
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solve::problem::MmJunction;

    #[test]
    fn rule_aware_cost_distances_respect_lookups_and_junctions() {
        // 0* - 1 - 2* directly; 0* - 3* (lookup) - 2*: no shortcut through 3.
        // 4 - 5 (junction of 6 and 7) - 6*, 5 - 7: 4 reaches 6 only around.
        let mut p =
            CoreProblem::new(9, &[(0, 1), (1, 2), (0, 3), (3, 2), (4, 5), (5, 6), (5, 7), (7, 8), (8, 4), (4, 0)]);
        for t in [0, 2, 3, 6] {
            p.relevant[t] = true;
        }
        p.lookup[3] = true;
        p.junctions.push(MmJunction { k: 5, sides: [6, 7] });
        let plain = cost_distances(&p, 2);
        let step_rules = StepRules::new(&p);
        let rules = cost_distances_rules(&p, &step_rules, 2);
        // From 0 to 2: through the relevant lookup 3 costs nothing without
        // the rules; with them, 3 is no interior table and 1 (outside T) is
        // the way.
        assert_eq!(plain[0], 0);
        assert_eq!(rules[0], 1);
        // Into the lookup itself as an endpoint is fine.
        assert_eq!(rules[3], 0);
        let to6_plain = cost_distances(&p, 6);
        let to6 = cost_distances_rules(&p, &step_rules, 6);
        // 4 -> 5 -> 6 passes the junction from a non-side: not allowed;
        // 4 -> 8 -> 7 -> 5 -> 6 is (8, 7, 5 outside T).
        assert_eq!(to6_plain[4], 1);
        assert_eq!(to6[4], 3);
    }
}
