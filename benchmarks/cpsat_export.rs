//! One solved GenerateView instance as a JSON line for
//! `benchmarks/cpsat_baseline.py` (the paper's CP-SAT model, side by side).
//! Shared by `solve_bench --export` and `tests/cpsat_baseline.rs`.

use lucy::solve::preprocess::{prune, prune_by_cost};
use lucy::solve::problem::CoreProblem;
use lucy::types::ViewResult;

/// The core walk problem as lucy's solvers see it, the n lucy proved (its
/// optimal walk's length), lucy's optimal cost and time, and the (table,
/// step) variables lucy's exact reductions keep at that n and cost
/// (`reduced_steps[i]` lists the steps 1..=n node i may take).
pub fn instance_line(label: &str, query: &[String], p: &CoreProblem, res: &ViewResult, lucy_ms: f64) -> String {
    let n = res.path_length;
    let cost = res.objective.round() as usize;
    let mut pr = prune(p, n);
    prune_by_cost(p, cost, &mut pr.allowed);
    let edges: Vec<[usize; 2]> =
        (0..p.len()).flat_map(|a| p.adj[a].iter().filter(move |&&b| a < b).map(move |&b| [a, b])).collect();
    let reduced: Vec<Vec<usize>> =
        pr.allowed.iter().map(|a| a.iter().enumerate().filter(|(_, &x)| x).map(|(r, _)| r + 1).collect()).collect();
    serde_json::json!({
        "model": label,
        "query": query,
        "nodes": p.names,
        "edges": edges,
        "relevant": p.relevant_nodes(),
        "lookups": (0..p.len()).filter(|&i| p.lookup[i]).collect::<Vec<_>>(),
        "junctions": p.junctions.iter().map(|j| [j.k, j.sides[0], j.sides[1]]).collect::<Vec<_>>(),
        "bridges": p.bridges.iter().map(|b| [b.t, b.sides[0], b.sides[1]]).collect::<Vec<_>>(),
        "n": n,
        "lucy_cost": cost,
        "lucy_len": n,
        "lucy_ms": lucy_ms,
        "reduced_steps": reduced,
    })
    .to_string()
}
