//! Single dense retrieval (the paper's "Single DPR" baseline): the B
//! documents most cosine-similar to one embedding of the whole question.

use std::time::Instant;

use super::score::Instance;
use super::Selection;

/// Indices of the `b` highest `relevance` values, best first (ties by index).
pub fn top_b(relevance: &[f64], b: usize) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..relevance.len()).collect();
    idx.sort_by(|&i, &j| relevance[j].total_cmp(&relevance[i]).then(i.cmp(&j)));
    idx.truncate(b);
    idx
}

/// Dense retrieval restricted to an instance's candidates, `relevance[d]`
/// being cos(question, d); valued with the CRUSH objective so it can be
/// compared with the other solvers on the same instance.
pub fn solve(inst: &Instance, relevance: &[f64]) -> Selection {
    let start = Instant::now();
    let chosen = top_b(&relevance[..inst.n().min(relevance.len())], inst.effective_budget());
    Selection::heuristic(inst, chosen, start.elapsed().as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_highest_relevance_first() {
        assert_eq!(top_b(&[0.1, 0.9, 0.5, 0.9], 3), vec![1, 3, 2]);
        assert_eq!(top_b(&[0.1], 3), vec![0]);
    }
}
