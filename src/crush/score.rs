//! CRUSH scores (crush4sql §3.2): candidate set, entropy-guided similarity
//! (eqs 1–2), connectivity, and the objective O1 + λ·O2 (eqs 3–6) evaluated
//! directly on a chosen set. The solvers only ever see an [`Instance`].

use std::collections::HashMap;

use super::embed::cosine;

/// A CRUSH selection problem over candidate set C(x) (indices `0..n`).
#[derive(Debug, Clone, PartialEq)]
pub struct Instance {
    /// `s[k][d]`: entropy-guided similarity of probe k and candidate d (eq. 2).
    pub s: Vec<Vec<f64>>,
    /// Connectivity `e(d, d') > 0` for unordered pairs `d < d'`; absent pairs
    /// have `e = 0`.
    pub edges: Vec<(usize, usize, f64)>,
    /// Weight of O2 (the paper's ♣, 1 in all its experiments).
    pub lambda: f64,
    /// |R|: exactly this many candidates are chosen (capped at `n`).
    pub budget: usize,
}

impl Instance {
    /// Number of candidates |C(x)|.
    pub fn n(&self) -> usize {
        self.s.first().map(Vec::len).unwrap_or(0)
    }

    /// Number of probes |K(x)|.
    pub fn m(&self) -> usize {
        self.s.len()
    }

    /// The budget actually enforced: `min(B, n)`.
    pub fn effective_budget(&self) -> usize {
        self.budget.min(self.n())
    }

    /// O1(R) + λ·O2(R) with
    /// O1 = Σ_k log Σ_{d∈R} exp(s_kd) and
    /// O2 = Σ_{d∈R} log Σ_{d'∈R} exp(e(d,d')), where e(d,d) = 0.
    /// Computed straight from the definition (no reformulation), so it is
    /// the reference every solver is checked against. Empty R scores 0.
    pub fn objective(&self, chosen: &[usize]) -> f64 {
        if chosen.is_empty() {
            return 0.0;
        }
        let o1: f64 = self.s.iter().map(|row| log_sum_exp(chosen.iter().map(|&d| row[d]))).sum();
        let e = self.edge_map();
        let o2: f64 = chosen
            .iter()
            .map(|&d| {
                log_sum_exp(chosen.iter().map(|&d2| {
                    if d == d2 {
                        0.0
                    } else {
                        e.get(&(d.min(d2), d.max(d2))).copied().unwrap_or(0.0)
                    }
                }))
            })
            .sum();
        o1 + self.lambda * o2
    }

    /// `(a, Σ_k M_k)` with a_kd = exp(s_kd − M_k), M_k = max_d s_kd: each
    /// probe's log-sum-exp is log Σ_{d∈R} a_kd + M_k, with every a in (0, 1]
    /// however large s/τ gets. Shared by the exact solver and the swaps.
    pub fn shifted_exp(&self) -> (Vec<Vec<f64>>, f64) {
        let shift: Vec<f64> = self.s.iter().map(|row| row.iter().copied().fold(f64::NEG_INFINITY, f64::max)).collect();
        let a = self.s.iter().zip(&shift).map(|(row, m)| row.iter().map(|s| (s - m).exp()).collect()).collect();
        (a, shift.iter().sum())
    }

    /// Edge weights by unordered pair (parallel entries are summed).
    pub fn edge_map(&self) -> HashMap<(usize, usize), f64> {
        let mut m = HashMap::new();
        for &(a, b, w) in &self.edges {
            if a != b {
                *m.entry((a.min(b), a.max(b))).or_insert(0.0) += w;
            }
        }
        m
    }
}

/// log Σ exp(v), stable.
pub fn log_sum_exp(v: impl Iterator<Item = f64> + Clone) -> f64 {
    let max = v.clone().fold(f64::NEG_INFINITY, f64::max);
    if max == f64::NEG_INFINITY {
        return f64::NEG_INFINITY;
    }
    max + v.map(|x| (x - max).exp()).sum::<f64>().ln()
}

/// Logistic sigmoid.
pub fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// `cos[k][d]` for every probe vector and every document vector.
pub fn cosine_matrix(probes: &[Vec<f32>], docs: &[Vec<f32>]) -> Vec<Vec<f64>> {
    probes.iter().map(|p| docs.iter().map(|d| cosine(p, d)).collect()).collect()
}

/// C(x): the `n` documents with the highest cosine to any probe, best
/// first (ties broken by document order). This is the union of the probes'
/// nearest neighbours cut to `n` elements in all, as the authors' code does.
pub fn candidates(cos: &[Vec<f64>], n: usize) -> Vec<usize> {
    let docs = cos.first().map(Vec::len).unwrap_or(0);
    let mut best: Vec<(f64, usize)> =
        (0..docs).map(|d| (cos.iter().map(|row| row[d]).fold(f64::NEG_INFINITY, f64::max), d)).collect();
    best.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    best.into_iter().take(n).map(|(_, d)| d).collect()
}

/// Entropy-guided similarity (eqs 1–2) over a candidate set: `cos[k][j]` is
/// the cosine of probe k and the j-th candidate. For each probe,
/// p_k(d) = ½(1+cos) / Σ_{d'∈C} ½(1+cos'), H(k) its entropy, H̄ the mean
/// entropy over probes, and s_kd = ½(1+cos(k,d)) · σ(H̄ − H(k)).
pub fn entropy_guided(cos: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let entropies: Vec<f64> = cos.iter().map(|row| entropy(row)).collect();
    let mean = if entropies.is_empty() { 0.0 } else { entropies.iter().sum::<f64>() / entropies.len() as f64 };
    cos.iter()
        .zip(&entropies)
        .map(|(row, h)| {
            let w = sigmoid(mean - h);
            row.iter().map(|c| 0.5 * (1.0 + c) * w).collect()
        })
        .collect()
}

/// Entropy of the multinomial of eq. 1 for one probe's cosines.
pub fn entropy(row: &[f64]) -> f64 {
    let mass: Vec<f64> = row.iter().map(|c| (0.5 * (1.0 + c)).max(0.0)).collect();
    let total: f64 = mass.iter().sum();
    if total <= 0.0 {
        return 0.0;
    }
    mass.iter()
        .filter(|&&m| m > 0.0)
        .map(|m| {
            let p = m / total;
            -p * p.ln()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objective_matches_hand_computation() {
        // Two probes, three candidates, an edge between 0 and 2.
        let inst = Instance {
            s: vec![vec![0.9, 0.1, 0.2], vec![0.0, 0.8, 0.3]],
            edges: vec![(0, 2, 0.5)],
            lambda: 1.0,
            budget: 2,
        };
        let r = [0usize, 2];
        let o1 = (0.9f64.exp() + 0.2f64.exp()).ln() + (0.0f64.exp() + 0.3f64.exp()).ln();
        let o2 = 2.0 * (1.0 + 0.5f64.exp()).ln();
        assert!((inst.objective(&r) - (o1 + o2)).abs() < 1e-12);
        // Without the edge, O2 is |R| log |R|.
        let r2 = [0usize, 1];
        let o1b = (0.9f64.exp() + 0.1f64.exp()).ln() + (0.0f64.exp() + 0.8f64.exp()).ln();
        assert!((inst.objective(&r2) - (o1b + 2.0 * 2f64.ln())).abs() < 1e-12);
    }

    #[test]
    fn flat_probe_is_damped() {
        // Probe 0 prefers one document sharply, probe 1 likes all equally.
        let cos = vec![vec![0.9, -0.9, -0.9, -0.9], vec![0.5, 0.5, 0.5, 0.5]];
        let s = entropy_guided(&cos);
        assert!(entropy(&cos[1]) > entropy(&cos[0]));
        // Sharp probe gets σ(positive) > ½, flat probe σ(negative) < ½.
        assert!(s[0][0] > 0.5 * 1.9 * 0.5);
        assert!(s[1][0] < 0.5 * 1.5 * 0.5);
    }

    #[test]
    fn candidates_take_best_cosine_over_probes() {
        let cos = vec![vec![0.1, 0.9, 0.2, 0.0], vec![0.8, 0.0, 0.1, 0.3]];
        assert_eq!(candidates(&cos, 3), vec![1, 0, 3]);
        assert_eq!(candidates(&cos, 10).len(), 4);
    }

    #[test]
    fn log_sum_exp_is_stable() {
        let v = [1000.0, 1000.0];
        assert!((log_sum_exp(v.iter().copied()) - (1000.0 + 2f64.ln())).abs() < 1e-9);
    }
}
