//! A quick valid walk for large relevant sets (more than the Held–Karp
//! size): nearest-first, from each relevant table, along cheapest paths that
//! keep C3's and C4's interior rules, kept when the full checker
//! ([`CoreProblem::violation`]) accepts it. The exact search uses its value
//! as an upper bound, and it is the answer — marked not proven optimal —
//! when the search runs out of time on an enterprise-sized request.

use std::collections::VecDeque;

use super::distance::INF;
use super::problem::{CoreProblem, StepRules};

/// The best valid walk found from up to `starts` relevant tables, with its
/// (cost, length); `None` when no start gave a valid walk.
pub fn greedy_walk(p: &CoreProblem, starts: usize) -> Option<(Vec<usize>, usize, usize)> {
    let rules = StepRules::new(p);
    let rel = p.relevant_nodes();
    let mut best: Option<(Vec<usize>, usize, usize)> = None;
    for &s in rel.iter().take(starts) {
        let Some(w) = from(p, &rules, s, &rel) else { continue };
        if p.violation(&w).is_some() {
            continue;
        }
        let (c, l) = p.objective(&w);
        if best.as_ref().is_none_or(|b| (c, l) < (b.1, b.2)) {
            best = Some((w, c, l));
        }
    }
    best
}

/// From `s`, repeatedly walk to the nearest unvisited relevant table (fewest
/// tables outside T, 0-1 BFS) until all are visited.
fn from(p: &CoreProblem, rules: &StepRules, s: usize, rel: &[usize]) -> Option<Vec<usize>> {
    let n = p.len();
    let mut walk = vec![s];
    let mut seen = vec![false; n];
    seen[s] = true;
    let mut left = rel.len() - 1;
    let (mut dist, mut parent) = (vec![INF; n], vec![usize::MAX; n]);
    while left > 0 {
        let cur = *walk.last()?;
        let prev = (walk.len() >= 2).then(|| walk[walk.len() - 2]);
        dist.iter_mut().for_each(|d| *d = INF);
        parent.iter_mut().for_each(|x| *x = usize::MAX);
        dist[cur] = 0;
        let mut dq = VecDeque::from([cur]);
        let mut target = None;
        while let Some(u) = dq.pop_front() {
            if u != cur && p.relevant[u] && !seen[u] {
                target = Some(u);
                break;
            }
            if u != cur && rules.lookup(u) {
                continue;
            }
            let pred = if u == cur { prev } else { Some(parent[u]) };
            for &v in &p.adj[u] {
                if rules.special(u) && !rules.allowed(pred, u, v) {
                    continue;
                }
                let w = (!p.relevant[v]) as u32;
                if dist[u] + w < dist[v] {
                    dist[v] = dist[u] + w;
                    parent[v] = u;
                    if w == 0 {
                        dq.push_front(v);
                    } else {
                        dq.push_back(v);
                    }
                }
            }
        }
        let t = target?;
        let mut path = vec![t];
        let mut x = t;
        while parent[x] != cur {
            x = parent[x];
            if x == usize::MAX || path.len() > n {
                return None;
            }
            path.push(x);
        }
        path.reverse();
        for &v in &path {
            if p.relevant[v] && !seen[v] {
                seen[v] = true;
                left -= 1;
            }
        }
        walk.extend(path);
    }
    Some(walk)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_star_of_relevant_tables_around_a_hub() {
        // 0 is a hub; 1..=4 relevant leaves; 5 a lookup next to 1.
        let mut p = CoreProblem::new(6, &[(0, 1), (0, 2), (0, 3), (0, 4), (1, 5)]);
        for t in [1, 2, 3, 4] {
            p.relevant[t] = true;
        }
        p.lookup[5] = true;
        let (w, c, l) = greedy_walk(&p, 4).expect("a walk");
        assert_eq!(p.violation(&w), None);
        assert_eq!((c, l), p.objective(&w));
        // 1 0 2 0 3 0 4: three visits of the hub.
        assert_eq!((c, l), (3, 7));
    }

    #[test]
    fn no_walk_when_the_only_way_passes_a_lookup() {
        // 0 – L – 2 with L a lookup: C4 forbids passing through it.
        let mut p = CoreProblem::new(3, &[(0, 1), (1, 2)]);
        p.relevant[0] = true;
        p.relevant[2] = true;
        p.lookup[1] = true;
        assert_eq!(greedy_walk(&p, 2), None);
    }
}
