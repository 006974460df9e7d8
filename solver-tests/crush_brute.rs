//! CRUSH exact solver vs brute-force enumeration on random small instances
//! (|C| ≤ 14, B ≤ 5): the exact objective equals the enumerated optimum
//! within 1e-6 (with and without the swap local-search start), its
//! certified gap is ≤ 1e-6, and it is never beaten by the greedy, the swap
//! local search or dense baselines.

use lucy::crush::exact::{self, ExactOptions};
use lucy::crush::score::{entropy_guided, Instance};
use lucy::crush::{dense, greedy, local, SolveStatus};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Best objective over all subsets of size `min(B, n)`.
fn brute_force(inst: &Instance) -> (f64, Vec<usize>) {
    let n = inst.n();
    let b = inst.effective_budget();
    let mut best = (f64::NEG_INFINITY, Vec::new());
    for mask in 0u32..(1 << n) {
        if mask.count_ones() as usize != b {
            continue;
        }
        let set: Vec<usize> = (0..n).filter(|&i| mask >> i & 1 == 1).collect();
        let v = inst.objective(&set);
        if v > best.0 {
            best = (v, set);
        }
    }
    best
}

fn random_instance(rng: &mut ChaCha8Rng) -> (Instance, Vec<f64>) {
    let n = rng.random_range(1..=14usize);
    let m = rng.random_range(1..=5usize);
    let budget = rng.random_range(1..=5usize);
    // Cosines like a real embedder's: mostly mildly positive, a few high.
    let cos: Vec<Vec<f64>> = (0..m)
        .map(|_| {
            (0..n)
                .map(|_| if rng.random_bool(0.2) { rng.random_range(0.6..1.0) } else { rng.random_range(-0.3..0.6) })
                .collect()
        })
        .collect();
    let s = entropy_guided(&cos);
    // Connectivity: the paper's tiny γ, or strong edges that matter.
    let gamma = [0.01, 0.3, 1.0, 2.5][rng.random_range(0..4)];
    let density = rng.random_range(0.0..0.6);
    let mut edges = Vec::new();
    for i in 0..n {
        for j in i + 1..n {
            if rng.random_bool(density) {
                let e = if rng.random_bool(0.7) { gamma } else { rng.random_range(0.0..gamma) };
                edges.push((i, j, e));
            }
        }
    }
    let lambda = [1.0, 1.0, 0.5, 3.0][rng.random_range(0..4)];
    let relevance: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
    (Instance { s, edges, lambda, budget }, relevance)
}

#[test]
fn crush_exact_matches_brute_force_and_dominates_baselines() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x000C_2054);
    let opts = ExactOptions { time_limit_s: 30.0, ..Default::default() };
    // Without the local-search start the MILP must find the optimum itself.
    let milp_only = ExactOptions { local_search: false, ..opts };
    let mut strictly_better_than_greedy = 0;
    let mut local_suboptimal = 0;
    let instances = 220;
    for case in 0..instances {
        let (inst, relevance) = random_instance(&mut rng);
        let (opt, opt_set) = brute_force(&inst);
        let cold = exact::solve(&inst, &milp_only).unwrap();
        assert!(
            (cold.objective - opt).abs() <= 1e-6,
            "case {case} without local search: exact {} vs brute {opt}",
            cold.objective
        );
        assert_eq!(cold.status, SolveStatus::Optimal, "case {case} without local search");
        let gr0 = greedy::solve(&inst);
        let (ls, ls_val) = local::improve(&inst, &gr0.chosen, 100);
        assert_eq!(ls.len(), inst.effective_budget(), "case {case}: local search changed |R|");
        assert!((ls_val - inst.objective(&ls)).abs() < 1e-12, "case {case}");
        assert!(
            ls_val >= gr0.objective - 1e-12 && ls_val <= opt + 1e-9,
            "case {case}: local {ls_val} greedy {} opt {opt}",
            gr0.objective
        );
        if ls_val < opt - 1e-6 {
            local_suboptimal += 1;
        }
        let ex = exact::solve(&inst, &opts).unwrap();
        let ctx = format!(
            "case {case}: n={} m={} B={} edges={} λ={} brute {opt_set:?}={opt} exact {:?}={}",
            inst.n(),
            inst.m(),
            inst.budget,
            inst.edges.len(),
            inst.lambda,
            ex.chosen,
            ex.objective
        );
        assert_eq!(ex.chosen.len(), inst.effective_budget(), "{ctx}");
        assert!((ex.objective - inst.objective(&ex.chosen)).abs() < 1e-12, "{ctx}");
        assert!((ex.objective - opt).abs() <= 1e-6, "{ctx}");
        assert_eq!(ex.status, SolveStatus::Optimal, "{ctx}");
        let gap = ex.gap.unwrap();
        assert!((0.0..=1e-6).contains(&gap), "gap {gap}: {ctx}");
        // The certified bound really bounds the optimum.
        assert!(ex.upper_bound.unwrap() >= opt - 1e-9, "{ctx}");
        let gr = greedy::solve(&inst);
        assert_eq!(gr.chosen.len(), inst.effective_budget(), "{ctx}");
        assert!(ex.objective >= gr.objective - 1e-9, "greedy {}: {ctx}", gr.objective);
        if ex.objective > gr.objective + 1e-9 {
            strictly_better_than_greedy += 1;
        }
        let de = dense::solve(&inst, &relevance);
        assert!(ex.objective >= de.objective - 1e-9, "dense {}: {ctx}", de.objective);
    }
    // The instances are not all trivial: greedy is suboptimal on some.
    assert!(strictly_better_than_greedy > 0, "greedy optimal on all {instances} instances: generator too easy");
    // ...and the MILP, not just the swaps, has to find some optima.
    assert!(local_suboptimal > 0, "swap local search optimal on all {instances} instances: generator too easy");
    eprintln!("crush_brute: {instances} instances, exact strictly better than greedy on {strictly_better_than_greedy}, than swap local search on {local_suboptimal}");
}

#[test]
fn crush_exact_respects_a_tiny_time_limit_with_a_valid_bound() {
    // A larger instance with a time limit too short to prove optimality:
    // whatever comes back must be a full selection with a valid bound.
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let n = 60;
    let cos: Vec<Vec<f64>> = (0..6).map(|_| (0..n).map(|_| rng.random_range(-0.2..0.9)).collect()).collect();
    let mut edges = Vec::new();
    for i in 0..n {
        for j in i + 1..n {
            if rng.random_bool(0.2) {
                edges.push((i, j, 1.0));
            }
        }
    }
    let inst = Instance { s: entropy_guided(&cos), edges, lambda: 1.0, budget: 12 };
    let ex = exact::solve(&inst, &ExactOptions { time_limit_s: 0.05, ..Default::default() }).unwrap();
    assert_eq!(ex.chosen.len(), 12);
    assert!(ex.upper_bound.unwrap() >= ex.objective - 1e-9);
    assert!(ex.objective >= greedy::solve(&inst).objective - 1e-9);
}
