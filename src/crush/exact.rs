//! The CRUSH objective solved exactly: a MILP on HiGHS with outer
//! approximation of the concave log terms (docs/crush.md has the proof).
//!
//! Reformulation (|R| = B fixed, x_d ∈ {0,1} selects candidate d):
//! - O1 = Σ_k log z_k with z_k = Σ_d exp(s_kd)·x_d, a concave function of a
//!   linear expression: epigraph variable t_k ≤ log z_k.
//! - O2 = Σ_{d∈R} log(B + Σ_{d'∈R} w_dd') with w = exp(e) − 1 ≥ 0
//!   = B·log B + Σ_d log(1 + q_d), q_d = (1/B)·Σ_{d'} w_dd'·y_dd', where
//!   y_dd' = x_d·x_d' is linearised by y ≤ x_d, y ≤ x_d' (the objective is
//!   nondecreasing in y, so y = min(x_d, x_d') at an optimum; and q_d = 0
//!   whenever x_d = 0, which makes the x_d factor implicit).
//! - t_k and u_d are bounded above by tangent planes of log at points
//!   where it was evaluated. Tangents of a concave function over-estimate
//!   it, so every MILP optimum is an upper bound on the true optimum; after
//!   each solve, tangents at the new point are added, and the loop stops when
//!   bound − best true value ≤ tolerance. A point whose tangents are in the
//!   model is valued exactly by the MILP, so no point can be returned twice
//!   without closing the gap: the loop is finite.

use std::time::Instant;

use highs::{Col, ColProblem, HighsModelStatus, Model, Sense};

use super::score::Instance;
use super::{greedy, local};
use super::{Selection, SolveStatus};
use crate::error::{Error, Result};

/// Options of the exact solver.
#[derive(Debug, Clone, Copy)]
pub struct ExactOptions {
    /// Wall-time budget for the whole outer-approximation loop, seconds.
    pub time_limit_s: f64,
    /// Stop when (upper bound − best true objective) ≤ this.
    pub gap_tolerance: f64,
    /// Safety cap on outer-approximation rounds.
    pub max_rounds: usize,
    /// Start from the swap local optimum of the greedy pick (default) rather
    /// than the greedy pick itself. Off only to test or measure the MILP's
    /// own search.
    pub local_search: bool,
}

impl Default for ExactOptions {
    fn default() -> Self {
        ExactOptions { time_limit_s: 30.0, gap_tolerance: 1e-6, max_rounds: 500, local_search: true }
    }
}

struct Layout {
    x: Vec<Col>,
    t: Vec<Col>,
    y: Vec<Col>,
    u: Vec<Option<Col>>,
    /// exp(s_kd)
    a: Vec<Vec<f64>>,
    /// (i, j, w_ij) with w = exp(e) − 1 > 0
    pairs: Vec<(usize, usize, f64)>,
    /// for each candidate: (pair index, w)
    incident: Vec<Vec<(usize, f64)>>,
    b: f64,
}

impl Layout {
    fn z(&self, k: usize, chosen: &[bool]) -> f64 {
        self.a[k].iter().zip(chosen).filter(|(_, &c)| c).map(|(a, _)| a).sum()
    }
    fn q(&self, d: usize, chosen: &[bool]) -> f64 {
        self.incident[d]
            .iter()
            .filter(|(p, _)| {
                let (i, j, _) = self.pairs[*p];
                chosen[i] && chosen[j]
            })
            .map(|(_, w)| w)
            .sum::<f64>()
            / self.b
    }
}

fn herr(what: &str, e: impl std::fmt::Debug) -> Error {
    Error::Solver(format!("CRUSH exact MILP: HiGHS failed to {what}: {e:?}"))
}

/// Solve `inst` exactly (up to `opts.gap_tolerance`, within the time limit).
pub fn solve(inst: &Instance, opts: &ExactOptions) -> Result<Selection> {
    let start = Instant::now();
    let n = inst.n();
    let bsz = inst.effective_budget();
    if bsz == 0 || bsz == n {
        let chosen: Vec<usize> = (0..bsz).collect();
        let obj = inst.objective(&chosen);
        return Ok(Selection::proved(chosen, obj, start.elapsed().as_secs_f64(), 0));
    }
    let b = bsz as f64;
    let lambda = inst.lambda;

    let mut model: Model = ColProblem::default().optimise(Sense::Maximise);
    model.set_option("threads", 1);
    model.set_option("mip_rel_gap", 0.0);
    model.set_option("mip_abs_gap", opts.gap_tolerance * 0.5);

    let add = |m: &mut Model, cost: f64, lo: f64, hi: f64, int: bool| -> Result<Col> {
        m.try_add_column_with_integrality(cost, lo..=hi, std::iter::empty(), int).map_err(|e| herr("add a variable", e))
    };
    // Shifted coefficients keep the cuts well scaled; the shift is added
    // back to the bound.
    let (a, shift_total) = inst.shifted_exp();
    let mut x = Vec::with_capacity(n);
    for _ in 0..n {
        x.push(add(&mut model, 0.0, 0.0, 1.0, true)?);
    }
    let mut t = Vec::with_capacity(inst.m());
    let mut zrange = Vec::with_capacity(inst.m());
    for row in &a {
        let mut sorted = row.clone();
        sorted.sort_by(|p, q| p.total_cmp(q));
        let lo: f64 = sorted[..bsz].iter().sum();
        let hi: f64 = sorted[n - bsz..].iter().sum();
        zrange.push((lo, hi));
        // After the shift hi ≥ 1; lo may underflow at low temperature, and
        // an unbounded-below t is as valid (it is maximised).
        let lower = if lo > 1e-100 { lo.ln() } else { f64::NEG_INFINITY };
        t.push(add(&mut model, 1.0, lower, hi.ln(), false)?);
    }
    let mut pairs = Vec::new();
    let mut incident = vec![Vec::new(); n];
    for ((i, j), e) in inst.edge_map() {
        let w = e.exp() - 1.0;
        if w > 0.0 && i < n && j < n {
            incident[i].push((pairs.len(), w));
            incident[j].push((pairs.len(), w));
            pairs.push((i, j, w));
        }
    }
    let mut y = Vec::with_capacity(pairs.len());
    for &(i, j, _) in &pairs {
        let c = add(&mut model, 0.0, 0.0, 1.0, false)?;
        model.try_add_row(..=0.0, [(c, 1.0), (x[i], -1.0)]).map_err(|e| herr("add a row", e))?;
        model.try_add_row(..=0.0, [(c, 1.0), (x[j], -1.0)]).map_err(|e| herr("add a row", e))?;
        y.push(c);
    }
    // Valid and much tighter than y ≤ x alone in the LP relaxation: a
    // chosen d has at most B−1 chosen partners, an unchosen one none.
    for d in 0..n {
        if incident[d].len() > bsz - 1 {
            let row = incident[d].iter().map(|&(p, _)| (y[p], 1.0)).chain(std::iter::once((x[d], -((bsz - 1) as f64))));
            model.try_add_row(..=0.0, row).map_err(|e| herr("add a row", e))?;
        }
    }
    let mut u = Vec::with_capacity(n);
    let mut qmax = vec![0.0; n];
    for d in 0..n {
        if incident[d].is_empty() {
            u.push(None);
        } else {
            // At most B−1 partners can be chosen with d.
            let mut ws: Vec<f64> = incident[d].iter().map(|(_, w)| *w).collect();
            ws.sort_by(|p, q| q.total_cmp(p));
            qmax[d] = ws.iter().take(bsz - 1).sum::<f64>() / b;
            u.push(Some(add(&mut model, lambda, 0.0, (1.0 + qmax[d]).ln(), false)?));
        }
    }
    model.try_add_row(b..=b, x.iter().map(|&c| (c, 1.0))).map_err(|e| herr("add the budget row", e))?;
    let lay = Layout { x, t, y, u, a, pairs, incident, b };

    // Initial tangents: at the ends and middle of each range, and at the
    // greedy solution (also the first incumbent and the MIP start).
    let mut cuts = 0usize;
    for k in 0..inst.m() {
        let (lo, hi) = zrange[k];
        for i in 0..=4 {
            let z0 = lo * (hi / lo).powf(i as f64 / 4.0);
            add_t_cut(&mut model, &lay, k, z0)?;
            cuts += 1;
        }
    }
    for d in 0..n {
        if lay.u[d].is_some() {
            for q0 in [0.0, qmax[d]] {
                add_u_cut(&mut model, &lay, d, q0)?;
                cuts += 1;
            }
        }
    }
    let g = greedy::solve(inst);
    let mut seen: Vec<Vec<bool>> = Vec::new();
    cuts += add_point_cuts(&mut model, &lay, &mask(n, &g.chosen))?;
    seen.push(mask(n, &g.chosen));
    // Swaps from the greedy pick usually reach the optimum; with its
    // tangents in the model the first MILP solve can certify it.
    let (mut best, mut best_val) = if opts.local_search {
        local::improve(inst, &g.chosen, local::default_passes(bsz))
    } else {
        (g.chosen.clone(), g.objective)
    };
    if best_val < g.objective {
        (best, best_val) = (g.chosen.clone(), g.objective);
    }
    if !seen.contains(&mask(n, &best)) {
        cuts += add_point_cuts(&mut model, &lay, &mask(n, &best))?;
        seen.push(mask(n, &best));
    }

    let mut upper = f64::INFINITY;
    let mut rounds = 0usize;
    let mut timed_out = false;
    while rounds < opts.max_rounds {
        let left = opts.time_limit_s - start.elapsed().as_secs_f64();
        if left <= 0.0 {
            timed_out = true;
            break;
        }
        rounds += 1;
        model.set_option("time_limit", left.max(0.01));
        let start_cols = start_point(&model, &lay, &mask(n, &best));
        let _ = model.try_set_solution(Some(&start_cols), None, None, None);
        let solved = model.try_solve().map_err(|e| herr("solve", e))?;
        let status = solved.status();
        let has_sol = solved.primal_solution_status() == highs::HighsSolutionStatus::Feasible;
        let dual = solved.double_info_value(c"mip_dual_bound").unwrap_or(f64::INFINITY);
        let primal = solved.objective_value();
        let round_upper = match status {
            HighsModelStatus::Optimal => {
                if dual.is_finite() {
                    dual.max(primal)
                } else {
                    primal
                }
            }
            _ => {
                if dual.is_finite() {
                    dual
                } else {
                    f64::INFINITY
                }
            }
        } + lambda * b * b.ln()
            + shift_total;
        // Cuts only tighten the model, so the latest bound is the best.
        upper = upper.min(round_upper);
        let point = if has_sol {
            let cols = solved.get_solution().columns().to_vec();
            Some(lay.x.iter().map(|c| cols[c.index()] > 0.5).collect::<Vec<bool>>())
        } else {
            None
        };
        model = Model::from(solved);
        if let Some(p) = &point {
            let chosen: Vec<usize> = (0..n).filter(|&d| p[d]).collect();
            if chosen.len() == bsz {
                let v = inst.objective(&chosen);
                if v > best_val {
                    best_val = v;
                    best = chosen;
                }
            }
        }
        if upper - best_val <= opts.gap_tolerance {
            break;
        }
        if !matches!(status, HighsModelStatus::Optimal) {
            timed_out = true;
            break;
        }
        match point {
            Some(p) if !seen.contains(&p) => {
                cuts += add_point_cuts(&mut model, &lay, &p)?;
                seen.push(p);
            }
            // The MILP returned a point it already values exactly: the
            // remaining gap is HiGHS's own tolerance; nothing left to cut.
            _ => break,
        }
    }
    let gap = (upper - best_val).max(0.0);
    let status = if gap <= opts.gap_tolerance {
        SolveStatus::Optimal
    } else if timed_out {
        SolveStatus::TimeLimit
    } else {
        SolveStatus::Feasible
    };
    best.sort_unstable();
    Ok(Selection {
        chosen: best,
        objective: best_val,
        upper_bound: Some(upper),
        gap: Some(gap),
        status,
        rounds,
        cuts,
        seconds: start.elapsed().as_secs_f64(),
    })
}

fn mask(n: usize, chosen: &[usize]) -> Vec<bool> {
    let mut m = vec![false; n];
    for &d in chosen {
        m[d] = true;
    }
    m
}

/// t_k ≤ log z0 + (z_k − z0)/z0.
fn add_t_cut(model: &mut Model, lay: &Layout, k: usize, z0: f64) -> Result<()> {
    // A tangent at any positive point is valid; flooring the point keeps
    // the coefficients a/z0 ≤ 1e6 (every row has an a = 1 after the shift).
    let z0 = z0.max(1e-6);
    let row = std::iter::once((lay.t[k], 1.0)).chain(lay.x.iter().zip(&lay.a[k]).map(|(&c, a)| (c, -a / z0)));
    model.try_add_row(..=z0.ln() - 1.0, row).map_err(|e| herr("add a cut", e))?;
    Ok(())
}

/// u_d ≤ log(1+q0) + (q_d − q0)/(1+q0), q_d = (1/B) Σ w·y.
fn add_u_cut(model: &mut Model, lay: &Layout, d: usize, q0: f64) -> Result<()> {
    let Some(ud) = lay.u[d] else { return Ok(()) };
    let slope = 1.0 / (1.0 + q0);
    let row = std::iter::once((ud, 1.0)).chain(lay.incident[d].iter().map(|&(p, w)| (lay.y[p], -slope * w / lay.b)));
    model.try_add_row(..=(1.0 + q0).ln() - q0 * slope, row).map_err(|e| herr("add a cut", e))?;
    Ok(())
}

/// Tangents of every term at the selection `chosen`.
fn add_point_cuts(model: &mut Model, lay: &Layout, chosen: &[bool]) -> Result<usize> {
    let mut c = 0;
    for k in 0..lay.t.len() {
        add_t_cut(model, lay, k, lay.z(k, chosen))?;
        c += 1;
    }
    for d in 0..lay.x.len() {
        if chosen[d] && lay.u[d].is_some() {
            add_u_cut(model, lay, d, lay.q(d, chosen))?;
            c += 1;
        }
    }
    Ok(c)
}

/// A feasible MIP start for the selection `chosen`: every epigraph variable
/// at its true value, which no tangent cuts off.
fn start_point(model: &Model, lay: &Layout, chosen: &[bool]) -> Vec<f64> {
    let ncols = lay.x.len() + lay.t.len() + lay.y.len() + lay.u.iter().flatten().count();
    let _ = model;
    let mut cols = vec![0.0; ncols];
    for (d, c) in lay.x.iter().enumerate() {
        cols[c.index()] = if chosen[d] { 1.0 } else { 0.0 };
    }
    for (k, c) in lay.t.iter().enumerate() {
        cols[c.index()] = lay.z(k, chosen).ln();
    }
    for (p, c) in lay.y.iter().enumerate() {
        let (i, j, _) = lay.pairs[p];
        cols[c.index()] = if chosen[i] && chosen[j] { 1.0 } else { 0.0 };
    }
    for (d, c) in lay.u.iter().enumerate() {
        if let Some(c) = c {
            cols[c.index()] = if chosen[d] { (1.0 + lay.q(d, chosen)).ln() } else { 0.0 };
        }
    }
    cols
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_the_covering_pair_over_two_near_duplicates() {
        // Candidates 0 and 1 both match probe 0 well; only 2 matches probe 1.
        let inst =
            Instance { s: vec![vec![0.95, 0.94, 0.1], vec![0.1, 0.1, 0.9]], edges: vec![], lambda: 1.0, budget: 2 };
        let r = solve(&inst, &ExactOptions::default()).unwrap();
        assert_eq!(r.chosen, vec![0, 2]);
        assert!(matches!(r.status, SolveStatus::Optimal));
        assert!(r.gap.unwrap() <= 1e-6);
    }

    #[test]
    fn connectivity_breaks_ties() {
        let inst = Instance { s: vec![vec![0.5, 0.5, 0.5, 0.5]], edges: vec![(1, 3, 0.5)], lambda: 1.0, budget: 2 };
        let r = solve(&inst, &ExactOptions::default()).unwrap();
        assert_eq!(r.chosen, vec![1, 3]);
    }
}
