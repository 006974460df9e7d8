//! The layered MILP of Lucy §3.3 (equations 1–9) on HiGHS, in the
//! edge-flow form: b[i][r] says table i is step r of the walk, x[i][j][r]
//! says the walk moves from i at step r to j at step r+1. The sink d[r] of
//! the paper is implicit (d[r] = 1 − Σ_i b[i][r]); flow conservation makes
//! it absorbing. docs/generate-view.md maps every paper equation to the rows
//! built here.
//!
//! [`variables`] declares the columns (and the objective and a MIP start
//! over them), [`constraints`] adds the rows; this module runs HiGHS and
//! reads the walk back.

mod constraints;
mod variables;

use std::time::Instant;

use good_lp::solvers::highs::highs;
use good_lp::{ResolutionError, Solution, SolutionStatus, SolverModel};

use super::problem::CoreProblem;
use variables::Vars;

/// How the MILP ended.
#[derive(Debug, Clone, PartialEq)]
pub enum MilpStatus {
    Optimal,
    /// Time limit with an incumbent.
    Feasible,
    Infeasible,
    /// Time limit without an incumbent.
    NoSolution,
}

/// Result of one MILP solve at a fixed n.
#[derive(Debug, Clone)]
pub struct MilpOutcome {
    pub status: MilpStatus,
    pub walk: Vec<usize>,
    pub variables: usize,
    pub constraints: usize,
    pub ms: f64,
}

/// Solve the layered model with at most `n` steps. `allowed[i][r]` (from
/// preprocessing) fixes b[i][r+1] = 0 where false; `None` builds the plain
/// model over every table and step.
pub fn solve_milp(
    p: &CoreProblem,
    n: usize,
    allowed: Option<&[Vec<bool>]>,
    time_limit_s: f64,
) -> Result<MilpOutcome, String> {
    solve_milp_from(p, n, allowed, None, time_limit_s)
}

/// [`solve_milp`] with an optional starting walk (a MIP start: HiGHS still
/// proves optimality itself; a start that violates the model is ignored).
pub fn solve_milp_from(
    p: &CoreProblem,
    n: usize,
    allowed: Option<&[Vec<bool>]>,
    start_walk: Option<&[usize]>,
    time_limit_s: f64,
) -> Result<MilpOutcome, String> {
    solve_milp_full(p, n, allowed, start_walk, None, time_limit_s)
}

/// The full entry point. `proven`: a (cost, length) proved optimal over all
/// walks (by the exact search); its objective value is then a valid lower
/// bound and is added as the row `objective ≥ (n+1)·cost + length`, which
/// closes the MIP gap as soon as HiGHS holds a walk of that value.
pub fn solve_milp_full(
    p: &CoreProblem,
    n: usize,
    allowed: Option<&[Vec<bool>]>,
    start_walk: Option<&[usize]>,
    proven: Option<(usize, usize)>,
    time_limit_s: f64,
) -> Result<MilpOutcome, String> {
    let start = Instant::now();
    let (v, problem) = Vars::new(p, n, allowed);
    let obj = v.objective(p, n);
    let obj_row = obj.clone();
    let start_vals = start_walk.filter(|w| w.len() <= n).map(|wk| v.start_values(p, wk)).unwrap_or_default();
    let mut model = problem.minimise(obj).using(highs).set_threads(1).set_time_limit(time_limit_s.max(0.001));
    model = model.set_option("mip_rel_gap", 0.0).set_option("mip_abs_gap", 0.999);
    if !start_vals.is_empty() {
        use good_lp::WithInitialSolution;
        model = model.with_initial_solution(start_vals);
    }
    let mut rows = 0usize;
    if let Some((c, l)) = proven {
        model.add_constraint(obj_row.geq(((n + 1) * c + l) as f64));
        rows += 1;
    }
    rows += constraints::add(&mut model, p, n, &v);

    let res = model.solve();
    let ms = start.elapsed().as_secs_f64() * 1e3;
    let mut out =
        MilpOutcome { status: MilpStatus::Infeasible, walk: Vec::new(), variables: v.count, constraints: rows, ms };
    match res {
        Ok(sol) => {
            out.status = match sol.status() {
                SolutionStatus::Optimal | SolutionStatus::GapLimit => MilpStatus::Optimal,
                SolutionStatus::TimeLimit => MilpStatus::Feasible,
            };
            out.walk = extract_walk(&sol, &v, n);
        }
        Err(ResolutionError::Infeasible) => out.status = MilpStatus::Infeasible,
        Err(ResolutionError::Other("NoSolutionFound")) => out.status = MilpStatus::NoSolution,
        Err(e) => return Err(format!("HiGHS: {e}")),
    }
    Ok(out)
}

/// The walk a solution encodes: the table at each step until the first
/// empty step (the sink).
fn extract_walk(sol: &impl Solution, v: &Vars, n: usize) -> Vec<usize> {
    let mut walk = Vec::new();
    for r in 0..n {
        match (0..v.b.len()).find(|&i| v.b[i][r].is_some_and(|x| sol.value(x) > 0.5)) {
            Some(i) => walk.push(i),
            None => break,
        }
    }
    walk
}
