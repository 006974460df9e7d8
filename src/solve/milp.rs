//! The layered MILP of Lucy §3.3 (equations 1–9) on HiGHS, in the
//! edge-flow form: b[i][r] says table i is step r of the walk, x[i][j][r]
//! says the walk moves from i at step r to j at step r+1. The sink d[r] of
//! the paper is implicit (d[r] = 1 − Σ_i b[i][r]); flow conservation makes
//! it absorbing. docs/generate-view.md maps every paper equation to the rows
//! built here.

use std::collections::HashMap;
use std::time::Instant;

use good_lp::solvers::highs::highs;
use good_lp::{
    variable, Expression, ProblemVariables, ResolutionError, Solution, SolutionStatus, SolverModel,
    Variable,
};

use super::problem::CoreProblem;

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
    let nn = p.len();
    let ok = |i: usize, r: usize| allowed.map_or(true, |a| a[i][r]);
    let mut vars = ProblemVariables::new();
    let mut nvars = 0usize;
    // b[i][r]
    let mut b: Vec<Vec<Option<Variable>>> = vec![vec![None; n]; nn];
    for i in 0..nn {
        for r in 0..n {
            if ok(i, r) {
                b[i][r] = Some(vars.add(variable().binary()));
                nvars += 1;
            }
        }
    }
    // x[(i, j, r)]: step r at i, step r+1 at j. Interior junction steps only
    // towards the opposite side (C3, eq. 6); a junction that no pattern lets
    // continue gets no outgoing arc at interior steps.
    let mut x: HashMap<(usize, usize, usize), Variable> = HashMap::new();
    for r in 0..n.saturating_sub(1) {
        for i in 0..nn {
            if b[i][r].is_none() {
                continue;
            }
            for &j in &p.adj[i] {
                if b[j][r + 1].is_none() {
                    continue;
                }
                if r > 0 && p.is_active_junction(i) {
                    let toward_side = p.junctions_at(i).all(|jn| jn.sides.contains(&j));
                    if !toward_side {
                        continue;
                    }
                }
                x.insert((i, j, r), vars.add(variable().binary()));
                nvars += 1;
            }
        }
    }
    // u[s]: side s of an m:m occurs; w[q]: both sides of pattern q occur.
    let mut u: HashMap<usize, Variable> = HashMap::new();
    let mut w: Vec<Option<Variable>> = Vec::new();
    let present = |i: usize| b[i].iter().any(Option::is_some);
    if p.c3 {
        for jn in &p.junctions {
            if present(jn.sides[0]) && present(jn.sides[1]) {
                for s in jn.sides {
                    u.entry(s).or_insert_with(|| {
                        nvars += 1;
                        vars.add(variable().binary())
                    });
                }
                w.push(Some(vars.add(variable().binary())));
                nvars += 1;
            } else {
                w.push(None);
            }
        }
    }

    // (1)(2) + tie-break: (n+1)·cost + length.
    let mut obj = Expression::from(0.0);
    for i in 0..nn {
        let wgt = if p.relevant[i] { 1.0 } else { (n + 1) as f64 + 1.0 };
        for v in b[i].iter().flatten() {
            obj += wgt * *v;
        }
    }
    let obj_row = obj.clone();
    let mut start_vals: Vec<(Variable, f64)> = Vec::new();
    if let Some(wk) = start_walk.filter(|w| w.len() <= n) {
        for (r, &i) in wk.iter().enumerate() {
            if let Some(v) = b[i][r] {
                start_vals.push((v, 1.0));
            }
            if r + 1 < wk.len() {
                if let Some(&v) = x.get(&(i, wk[r + 1], r)) {
                    start_vals.push((v, 1.0));
                }
            }
        }
        for (&s, &v) in &u {
            if wk.contains(&s) {
                start_vals.push((v, 1.0));
            }
        }
        for (q, jn) in p.junctions.iter().enumerate() {
            if let Some(Some(v)) = w.get(q) {
                if wk.contains(&jn.sides[0]) && wk.contains(&jn.sides[1]) {
                    start_vals.push((*v, 1.0));
                }
            }
        }
    }
    let mut model = vars.minimise(obj).using(highs).set_threads(1).set_time_limit(time_limit_s.max(0.001));
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
    let sum = |it: &mut dyn Iterator<Item = Variable>| -> Expression {
        let mut e = Expression::from(0.0);
        for v in it {
            e += v;
        }
        e
    };
    // (8) at step 1: the walk starts at a real table.
    model.add_constraint(sum(&mut (0..nn).filter_map(|i| b[i][0])).eq(1.0));
    rows += 1;
    let mut out_arcs: HashMap<(usize, usize), Vec<Variable>> = HashMap::new();
    let mut in_arcs: HashMap<(usize, usize), Vec<Variable>> = HashMap::new();
    for (&(i, j, r), &v) in &x {
        out_arcs.entry((i, r)).or_default().push(v);
        in_arcs.entry((j, r + 1)).or_default().push(v);
    }
    for i in 0..nn {
        for r in 0..n {
            let Some(bv) = b[i][r] else { continue };
            // (3)(8)(9): a table at step r>1 was entered along an edge; the
            // walk leaves along at most one edge (else it has ended: sink).
            if r > 0 {
                let ins = in_arcs.get(&(i, r)).cloned().unwrap_or_default();
                model.add_constraint(sum(&mut ins.into_iter()).eq(bv));
                rows += 1;
            }
            if r + 1 < n {
                let outs = out_arcs.get(&(i, r)).cloned().unwrap_or_default();
                model.add_constraint(sum(&mut outs.into_iter()).leq(bv));
                rows += 1;
            }
        }
    }
    // (4) C2: every relevant table occurs.
    for i in 0..nn {
        if p.relevant[i] {
            model.add_constraint(sum(&mut b[i].iter().flatten().copied()).geq(1.0));
            rows += 1;
        }
    }
    // (7) C4, fixed: a lookup at an interior step leaves towards the table
    // it came from. No row at the last step, so a lookup may end the walk.
    for l in 0..nn {
        if !p.is_active_lookup(l) {
            continue;
        }
        for r in 1..n.saturating_sub(1) {
            for &j in &p.adj[l] {
                if let Some(&out) = x.get(&(l, j, r)) {
                    let back = x.get(&(j, l, r - 1)).copied();
                    match back {
                        Some(bk) => model.add_constraint((Expression::from(out) - bk).leq(0.0)),
                        None => model.add_constraint(Expression::from(out).eq(0.0)),
                    };
                    rows += 1;
                }
            }
        }
    }
    // (6) C3: an interior junction goes to the side opposite the one it came from.
    for jn in p.junctions.iter().filter(|_| p.c3) {
        for r in 1..n.saturating_sub(1) {
            for (s_out, s_in) in [(jn.sides[1], jn.sides[0]), (jn.sides[0], jn.sides[1])] {
                if let Some(&out) = x.get(&(jn.k, s_out, r)) {
                    match x.get(&(s_in, jn.k, r - 1)).copied() {
                        Some(bk) => model.add_constraint((Expression::from(out) - bk).leq(0.0)),
                        None => model.add_constraint(Expression::from(out).eq(0.0)),
                    };
                    rows += 1;
                }
            }
        }
    }
    // (5) C3, conditional: if both sides occur, the junction occurs exactly
    // once and at an interior step (hence between them).
    for (q, jn) in p.junctions.iter().enumerate().filter(|_| p.c3) {
        let Some(Some(wq)) = w.get(q).copied() else { continue };
        let [s0, s1] = jn.sides;
        for s in [s0, s1] {
            let us = u[&s];
            for v in b[s].iter().flatten() {
                model.add_constraint((Expression::from(*v) - us).leq(0.0));
                rows += 1;
            }
        }
        if s0 == s1 {
            model.add_constraint((Expression::from(wq) - u[&s0]).geq(0.0));
        } else {
            model.add_constraint((Expression::from(wq) - u[&s0] - u[&s1]).geq(-1.0));
        }
        rows += 1;
        let occ = sum(&mut b[jn.k].iter().flatten().copied());
        let mut inner = Expression::from(0.0);
        for r in 1..n.saturating_sub(1) {
            for &j in &p.adj[jn.k] {
                if let Some(&v) = x.get(&(jn.k, j, r)) {
                    inner += v;
                }
            }
        }
        model.add_constraint((inner - wq).geq(0.0));
        model.add_constraint((occ + (n as f64 - 1.0) * wq).leq(n as f64));
        rows += 2;
    }

    let res = model.solve();
    let ms = start.elapsed().as_secs_f64() * 1e3;
    let mut out = MilpOutcome { status: MilpStatus::Infeasible, walk: Vec::new(), variables: nvars, constraints: rows, ms };
    match res {
        Ok(sol) => {
            out.status = match sol.status() {
                SolutionStatus::Optimal | SolutionStatus::GapLimit => MilpStatus::Optimal,
                SolutionStatus::TimeLimit => MilpStatus::Feasible,
            };
            for r in 0..n {
                let at = (0..nn).find(|&i| b[i][r].is_some_and(|v| sol.value(v) > 0.5));
                match at {
                    Some(i) => out.walk.push(i),
                    None => break,
                }
            }
        }
        Err(ResolutionError::Infeasible) => out.status = MilpStatus::Infeasible,
        Err(ResolutionError::Other("NoSolutionFound")) => out.status = MilpStatus::NoSolution,
        Err(e) => return Err(format!("HiGHS: {e}")),
    }
    Ok(out)
}
