//! The MILP's columns: b[i][r] (table i at step r), x[(i, j, r)] (the walk
//! moves i → j between steps r and r+1), u[s] (side s of an m:m occurs),
//! w[q] (both sides of pattern q occur) and z (a bridge sits between the
//! sides it bridges, C3 case c); the objective over them and a MIP start
//! from a known walk.

use std::collections::{BTreeMap, HashMap};

use good_lp::{variable, Expression, ProblemVariables, Variable};

use crate::solve::problem::CoreProblem;

/// The variables of one model at a fixed n. A `None` is a variable fixed
/// to 0 by preprocessing (never created).
pub(super) struct Vars {
    pub b: Vec<Vec<Option<Variable>>>,
    pub x: HashMap<(usize, usize, usize), Variable>,
    pub u: HashMap<usize, Variable>,
    pub w: Vec<Option<Variable>>,
    /// C3 case c: `z[(b, r, a)]` ≤ x(a → t at r−1) and ≤ x(t → other side
    /// at r), for bridge `b` = [`CoreProblem::bridges`]`[b]` (table t) at
    /// interior step r entered from its side `a`: 1 only when the walk
    /// passes side → t → other side there. Continuous in [0, 1]: bounded
    /// by two binaries and read only in ≥ rows, so an integral x gives it
    /// nothing a binary would not.
    pub z: BTreeMap<(usize, usize, usize), Variable>,
    /// Number of variables created.
    pub count: usize,
}

impl Vars {
    /// Declare every variable `allowed` permits (all when `None`), in the
    /// order b, x, then u/w.
    pub fn new(p: &CoreProblem, n: usize, allowed: Option<&[Vec<bool>]>) -> (Vars, ProblemVariables) {
        let nn = p.len();
        let ok = |i: usize, r: usize| allowed.is_none_or(|a| a[i][r]);
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
        // z: only where both arcs exist, for bridges of a pattern's sides.
        let mut z: BTreeMap<(usize, usize, usize), Variable> = BTreeMap::new();
        if p.c3 {
            for (bi, br) in p.bridges.iter().enumerate() {
                if !p.junctions.iter().any(|j| br.between(j.sides[0], j.sides[1])) {
                    continue;
                }
                for r in 1..n.saturating_sub(1) {
                    for (a, c) in [(br.sides[0], br.sides[1]), (br.sides[1], br.sides[0])] {
                        if x.contains_key(&(a, br.t, r - 1)) && x.contains_key(&(br.t, c, r)) {
                            z.insert((bi, r, a), vars.add(variable().min(0.0).max(1.0)));
                            nvars += 1;
                        }
                    }
                }
            }
        }
        (Vars { b, x, u, w, z, count: nvars }, vars)
    }

    /// (1)(2) + tie-break: (n+1)·cost + length.
    pub fn objective(&self, p: &CoreProblem, n: usize) -> Expression {
        let mut obj = Expression::from(0.0);
        for i in 0..p.len() {
            let wgt = if p.relevant[i] { 1.0 } else { (n + 1) as f64 + 1.0 };
            for v in self.b[i].iter().flatten() {
                obj += wgt * *v;
            }
        }
        obj
    }

    /// Values of the variables that encode walk `wk` (at most n tables), as
    /// a MIP start.
    pub fn start_values(&self, p: &CoreProblem, wk: &[usize]) -> Vec<(Variable, f64)> {
        let mut start_vals: Vec<(Variable, f64)> = Vec::new();
        for (r, &i) in wk.iter().enumerate() {
            if let Some(v) = self.b[i][r] {
                start_vals.push((v, 1.0));
            }
            if r + 1 < wk.len() {
                if let Some(&v) = self.x.get(&(i, wk[r + 1], r)) {
                    start_vals.push((v, 1.0));
                }
            }
        }
        for (&s, &v) in &self.u {
            if wk.contains(&s) {
                start_vals.push((v, 1.0));
            }
        }
        for (q, jn) in p.junctions.iter().enumerate() {
            if let Some(Some(v)) = self.w.get(q) {
                if wk.contains(&jn.sides[0]) && wk.contains(&jn.sides[1]) {
                    start_vals.push((*v, 1.0));
                }
            }
        }
        for (&(bi, r, a), &v) in &self.z {
            let br = &p.bridges[bi];
            let other = if a == br.sides[0] { br.sides[1] } else { br.sides[0] };
            if r + 1 < wk.len() && wk[r - 1] == a && wk[r] == br.t && wk[r + 1] == other {
                start_vals.push((v, 1.0));
            }
        }
        start_vals
    }
}
