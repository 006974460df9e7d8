//! The MILP's rows, equation by equation (Lucy §3.3; docs/generate-view.md
//! maps each to the paper).

use std::collections::HashMap;

use good_lp::{Expression, SolverModel, Variable};

use super::variables::Vars;
use crate::solve::problem::CoreProblem;

/// Add every row of the model over `v` to `model`; return how many.
pub(super) fn add(model: &mut impl SolverModel, p: &CoreProblem, n: usize, v: &Vars) -> usize {
    let mut rows = 0usize;
    rows += walk_rows(model, p, n, v);
    rows += coverage_rows(model, p, v);
    rows += lookup_rows(model, p, n, v);
    rows += junction_step_rows(model, p, n, v);
    rows += junction_occurrence_rows(model, p, n, v);
    rows += bridge_rows(model, p, v);
    rows
}

fn sum(it: &mut dyn Iterator<Item = Variable>) -> Expression {
    let mut e = Expression::from(0.0);
    for v in it {
        e += v;
    }
    e
}

/// (3)(8)(9): one table at step 1, every later table entered along an
/// edge, at most one edge out (else the walk has ended: sink).
fn walk_rows(model: &mut impl SolverModel, p: &CoreProblem, n: usize, v: &Vars) -> usize {
    let nn = p.len();
    let (b, x) = (&v.b, &v.x);
    let mut rows = 0;
    // (8) at step 1: the walk starts at a real table.
    model.add_constraint(sum(&mut (0..nn).filter_map(|i| b[i][0])).eq(1.0));
    rows += 1;
    let mut out_arcs: HashMap<(usize, usize), Vec<Variable>> = HashMap::new();
    let mut in_arcs: HashMap<(usize, usize), Vec<Variable>> = HashMap::new();
    for (&(i, j, r), &v) in x {
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
    rows
}

/// (4) C2: every relevant table occurs.
fn coverage_rows(model: &mut impl SolverModel, p: &CoreProblem, v: &Vars) -> usize {
    let mut rows = 0;
    for i in 0..p.len() {
        if p.relevant[i] {
            model.add_constraint(sum(&mut v.b[i].iter().flatten().copied()).geq(1.0));
            rows += 1;
        }
    }
    rows
}

/// (7) C4, fixed: a lookup at an interior step leaves towards the table it
/// came from. No row at the last step, so a lookup may end the walk.
fn lookup_rows(model: &mut impl SolverModel, p: &CoreProblem, n: usize, v: &Vars) -> usize {
    let mut rows = 0;
    for l in 0..p.len() {
        if !p.is_active_lookup(l) {
            continue;
        }
        for r in 1..n.saturating_sub(1) {
            for &j in &p.adj[l] {
                if let Some(&out) = v.x.get(&(l, j, r)) {
                    let back = v.x.get(&(j, l, r - 1)).copied();
                    match back {
                        Some(bk) => model.add_constraint((Expression::from(out) - bk).leq(0.0)),
                        None => model.add_constraint(Expression::from(out).eq(0.0)),
                    };
                    rows += 1;
                }
            }
        }
    }
    rows
}

/// (6) C3: an interior junction goes to the side opposite the one it came from.
fn junction_step_rows(model: &mut impl SolverModel, p: &CoreProblem, n: usize, v: &Vars) -> usize {
    let mut rows = 0;
    for jn in p.junctions.iter().filter(|_| p.c3) {
        for r in 1..n.saturating_sub(1) {
            for (s_out, s_in) in [(jn.sides[1], jn.sides[0]), (jn.sides[0], jn.sides[1])] {
                if let Some(&out) = v.x.get(&(jn.k, s_out, r)) {
                    match v.x.get(&(s_in, jn.k, r - 1)).copied() {
                        Some(bk) => model.add_constraint((Expression::from(out) - bk).leq(0.0)),
                        None => model.add_constraint(Expression::from(out).eq(0.0)),
                    };
                    rows += 1;
                }
            }
        }
    }
    rows
}

/// (5) C3, conditional: if both sides occur, the junction occurs exactly
/// once and at an interior step (hence between them) — or, when other
/// junctions between the same sides or bridges of them (C3 case c) may
/// settle the pair instead, not at all.
fn junction_occurrence_rows(model: &mut impl SolverModel, p: &CoreProblem, n: usize, v: &Vars) -> usize {
    let mut rows = 0;
    let (b, x, u) = (&v.b, &v.x, &v.u);
    for (q, jn) in p.junctions.iter().enumerate().filter(|_| p.c3) {
        let Some(Some(wq)) = v.w.get(q).copied() else { continue };
        let [s0, s1] = jn.sides;
        for s in [s0, s1] {
            let us = u[&s];
            for bv in b[s].iter().flatten() {
                model.add_constraint((Expression::from(*bv) - us).leq(0.0));
                rows += 1;
            }
        }
        if s0 == s1 {
            model.add_constraint((Expression::from(wq) - u[&s0]).geq(0.0));
        } else {
            model.add_constraint((Expression::from(wq) - u[&s0] - u[&s1]).geq(-1.0));
        }
        rows += 1;
        // Departures from junction k at interior steps: k occurs between
        // two tables.
        let inner_of = |k: usize| -> Expression {
            let mut inner = Expression::from(0.0);
            for r in 1..n.saturating_sub(1) {
                for &j in &p.adj[k] {
                    if let Some(&xv) = x.get(&(k, j, r)) {
                        inner += xv;
                    }
                }
            }
            inner
        };
        let occ = sum(&mut b[jn.k].iter().flatten().copied());
        let group = p.junction_group(q);
        // One junction of the group (usually the group is this one alone)
        // occurs at an interior step, or a bridge of the sides sits between
        // them (z, C3 case c)…
        let mut some_inner = Expression::from(0.0);
        for &o in &group {
            some_inner += inner_of(p.junctions[o].k);
        }
        let mut bridged = false;
        for (&(bi, _, _), &zv) in &v.z {
            if p.bridges[bi].between(s0, s1) {
                some_inner += zv;
                bridged = true;
            }
        }
        model.add_constraint((some_inner - wq).geq(0.0));
        // … this one at most once …
        model.add_constraint((occ.clone() + (n as f64 - 1.0) * wq).leq(n as f64));
        rows += 2;
        // … and, when another junction or a bridge may stand in for it,
        // only between the sides if at all (alone in its group and without
        // bridges, the rows above imply it).
        if group.len() > 1 || bridged {
            model.add_constraint((occ - inner_of(jn.k) + (n as f64) * wq).leq(n as f64));
            rows += 1;
        }
    }
    rows
}

/// C3 case c: z of a bridge t at step r entered from side a is at most the
/// arc a → t into step r and the arc t → other side out of it, so it is 1
/// only where the walk passes side → t → other side ([`junction_occurrence_rows`]
/// counts it as settling the sides' group).
fn bridge_rows(model: &mut impl SolverModel, p: &CoreProblem, v: &Vars) -> usize {
    let mut rows = 0;
    for (&(bi, r, a), &zv) in &v.z {
        let br = &p.bridges[bi];
        let other = if a == br.sides[0] { br.sides[1] } else { br.sides[0] };
        for arc in [(a, br.t, r - 1), (br.t, other, r)] {
            // Both arcs exist: z was created only then.
            model.add_constraint((Expression::from(zv) - v.x[&arc]).leq(0.0));
            rows += 1;
        }
    }
    rows
}
