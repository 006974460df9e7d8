//! The paper's greedy heuristic (crush4sql §3.2.2: "we find it expeditious
//! to use a simple greedy heuristic"), as in the authors' code: round-robin
//! coverage. Each round, every probe not yet covered proposes its best
//! unchosen candidate by s_kd plus a connectivity bonus; the best proposal
//! is taken and its probe marked covered. When every probe is covered the
//! marks are cleared, until |R| = B.

use std::time::Instant;

use super::score::Instance;
use super::Selection;

/// Greedy selection of `min(B, n)` candidates.
pub fn solve(inst: &Instance) -> Selection {
    let start = Instant::now();
    let n = inst.n();
    let m = inst.m();
    let bsz = inst.effective_budget();
    let edges = inst.edge_map();
    let mut adj: Vec<Vec<(usize, f64)>> = vec![Vec::new(); n];
    for (&(i, j), &e) in &edges {
        if i < n && j < n {
            adj[i].push((j, e));
            adj[j].push((i, e));
        }
    }
    let mut chosen: Vec<usize> = Vec::with_capacity(bsz);
    let mut taken = vec![false; n];
    let mut covered = vec![false; m];
    while chosen.len() < bsz {
        if m == 0 {
            // No probes: nothing to cover, take candidates in order.
            let d = (0..n).find(|&d| !taken[d]).unwrap_or(0);
            taken[d] = true;
            chosen.push(d);
            continue;
        }
        if covered.iter().all(|&c| c) {
            covered.iter_mut().for_each(|c| *c = false);
        }
        // Connectivity bonus of d given the chosen set: the smx-style gain
        // log(1 + Σ_{d'∈R} (exp(e(d,d')) − 1)), 0 when unconnected.
        let bonus = |d: usize| -> f64 {
            let s: f64 = adj[d].iter().filter(|(o, _)| taken[*o]).map(|(_, e)| e.exp() - 1.0).sum();
            inst.lambda * s.ln_1p()
        };
        let mut best: Option<(f64, usize, usize)> = None; // (score, probe, doc)
        for k in 0..m {
            if covered[k] {
                continue;
            }
            for d in 0..n {
                if taken[d] {
                    continue;
                }
                let sc = inst.s[k][d] + bonus(d);
                if best.is_none_or(|(b, _, _)| sc > b) {
                    best = Some((sc, k, d));
                }
            }
        }
        let Some((_, k, d)) = best else { break };
        covered[k] = true;
        taken[d] = true;
        chosen.push(d);
    }
    Selection::heuristic(inst, chosen, start.elapsed().as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn covers_each_probe_before_repeating() {
        let inst =
            Instance { s: vec![vec![0.9, 0.85, 0.1], vec![0.1, 0.1, 0.5]], edges: vec![], lambda: 1.0, budget: 2 };
        // Probe 0 takes 0, then probe 1 must be served: 2 (not 1).
        assert_eq!(solve(&inst).chosen, vec![0, 2]);
    }

    #[test]
    fn returns_exactly_the_budget() {
        let inst = Instance { s: vec![vec![0.3; 6]], edges: vec![], lambda: 1.0, budget: 4 };
        assert_eq!(solve(&inst).chosen.len(), 4);
        let small = Instance { s: vec![vec![0.3; 2]], edges: vec![], lambda: 1.0, budget: 4 };
        assert_eq!(solve(&small).chosen.len(), 2);
    }
}
