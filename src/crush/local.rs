//! Swap local search on a CRUSH selection: the exact solver's incumbent.
//!
//! The objective is nearly modular at the paper's temperature, so the
//! greedy pick is usually a few swaps away from the optimum. Starting the
//! outer approximation from that local optimum (and its tangents) lets the
//! first MILP solve certify it instead of spending a round finding it.

use super::score::Instance;

/// Incremental evaluator: keeps z_k = Σ_{d∈R} exp(s_kd − M_k) and, for each
/// candidate, the sum of w = exp(e) − 1 over its chosen partners, so a swap
/// is valued in O(m + deg) instead of from scratch.
struct State<'a> {
    inst: &'a Instance,
    /// exp(s_kd − M_k), M_k = max_d s_kd.
    a: Vec<Vec<f64>>,
    shift_total: f64,
    w: Vec<Vec<(usize, f64)>>,
    chosen: Vec<bool>,
    z: Vec<f64>,
    /// Σ_{d'∈R, d'≠d} w_dd' for every d (chosen or not).
    partner: Vec<f64>,
}

impl<'a> State<'a> {
    fn new(inst: &'a Instance, start: &[usize]) -> Self {
        let n = inst.n();
        let (a, shift_total) = inst.shifted_exp();
        let mut w = vec![Vec::new(); n];
        for ((i, j), e) in inst.edge_map() {
            let v = e.exp() - 1.0;
            if i < n && j < n && v != 0.0 {
                w[i].push((j, v));
                w[j].push((i, v));
            }
        }
        let mut st =
            State { inst, shift_total, a, w, chosen: vec![false; n], z: vec![0.0; inst.m()], partner: vec![0.0; n] };
        for &d in start {
            st.toggle(d);
        }
        st
    }

    fn toggle(&mut self, d: usize) {
        let sign = if self.chosen[d] { -1.0 } else { 1.0 };
        self.chosen[d] = !self.chosen[d];
        for (k, z) in self.z.iter_mut().enumerate() {
            *z += sign * self.a[k][d];
        }
        for &(o, v) in &self.w[d] {
            self.partner[o] += sign * v;
        }
    }

    /// O1 + λ·O2 of the current set, from the maintained sums:
    /// O2 = Σ_{d∈R} log(|R| + partner_d) (e(d,d) = 0 contributes exp 0 = 1).
    fn value(&self) -> f64 {
        let size = self.chosen.iter().filter(|&&c| c).count() as f64;
        let o1: f64 = self.z.iter().map(|z| z.ln()).sum::<f64>() + self.shift_total;
        let o2: f64 = (0..self.chosen.len()).filter(|&d| self.chosen[d]).map(|d| (size + self.partner[d]).ln()).sum();
        o1 + self.inst.lambda * o2
    }
}

/// The pass cap the exact solver starts with for a budget of `b`: enough
/// for the few swaps greedy picks need, bounded for large B.
pub fn default_passes(b: usize) -> usize {
    4 * b + 10
}

/// Best-improvement swaps (one in, one out) from `start` until no swap
/// raises the objective by more than `1e-12`, or `max_passes` passes.
/// Returns the improved selection (same size as `start`) and its value.
pub fn improve(inst: &Instance, start: &[usize], max_passes: usize) -> (Vec<usize>, f64) {
    let n = inst.n();
    if start.is_empty() || start.len() >= n {
        return (start.to_vec(), inst.objective(start));
    }
    let mut st = State::new(inst, start);
    let mut val = st.value();
    for _ in 0..max_passes {
        let mut best: Option<(f64, usize, usize)> = None;
        let ins: Vec<usize> = (0..n).filter(|&d| !st.chosen[d]).collect();
        let outs: Vec<usize> = (0..n).filter(|&d| st.chosen[d]).collect();
        for &o in &outs {
            st.toggle(o);
            for &i in &ins {
                st.toggle(i);
                let v = st.value();
                st.toggle(i);
                if v > val + 1e-12 && best.is_none_or(|(bv, _, _)| v > bv) {
                    best = Some((v, o, i));
                }
            }
            st.toggle(o);
        }
        let Some((v, o, i)) = best else { break };
        st.toggle(o);
        st.toggle(i);
        val = v;
    }
    let chosen: Vec<usize> = (0..n).filter(|&d| st.chosen[d]).collect();
    // Report the reference value, not the incremental one, so callers
    // compare like with like.
    let obj = inst.objective(&chosen);
    (chosen, obj)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn incremental_value_matches_the_reference_objective() {
        let inst = Instance {
            s: vec![vec![0.9, 0.1, 0.2, 0.4], vec![0.0, 0.8, 0.3, 0.1]],
            edges: vec![(0, 2, 0.5), (1, 3, 0.2), (0, 3, 0.1)],
            lambda: 0.7,
            budget: 3,
        };
        for set in [vec![0, 1, 2], vec![0, 2, 3], vec![1, 3], vec![0, 1, 2, 3]] {
            let st = State::new(&inst, &set);
            assert!((st.value() - inst.objective(&set)).abs() < 1e-9, "{set:?}");
        }
    }

    #[test]
    fn a_swap_reaches_the_better_pair() {
        // Starting from {0, 1} (both serve probe 0), swapping 1 for 2 covers
        // probe 1 as well.
        let inst =
            Instance { s: vec![vec![0.95, 0.94, 0.1], vec![0.1, 0.1, 0.9]], edges: vec![], lambda: 1.0, budget: 2 };
        let (chosen, v) = improve(&inst, &[0, 1], 10);
        assert_eq!(chosen, vec![0, 2]);
        assert!(v > inst.objective(&[0, 1]));
    }
}
