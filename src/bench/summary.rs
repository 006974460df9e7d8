//! Suite-level aggregates of a benchmark run's per-question results.

use serde::{Deserialize, Serialize};

use super::attribution::Label;
use super::oracle::MismatchClass;
use super::run::{GoldStatus, QuestionResult};
use crate::types::SolveStatus;

/// Suite-level numbers (the paper's table plus join accuracy and cost).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub questions: usize,
    /// Questions whose gold result could be computed.
    pub gold_executable: usize,
    pub ex: usize,
    pub esx: usize,
    /// Means over questions with a value.
    pub cov_t: Option<f64>,
    pub cov_a: Option<f64>,
    /// Mean share of the gold's tables the method's linked schema holds
    /// (questions with a value: see `QuestionMetrics::linked_recall`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub linked_recall: Option<f64>,
    /// Questions whose linked schema holds every gold table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub linked_complete: Option<usize>,
    /// Questions whose gold SQL reads two or more tables.
    pub multi_table: usize,
    /// Multi-table questions whose view was compared with the gold joins.
    pub join_compared: usize,
    pub join_matched: usize,
    pub join_exact: usize,
    pub infeasible: usize,
    pub view_runs_ok: usize,
    pub view_runs_total: usize,
    pub solve_ms_median: Option<f64>,
    pub solve_ms_p95: Option<f64>,
    /// The model's time per question (`Cost::model_ms`), median and p95
    /// over the questions that called it, to a tenth of a millisecond; a
    /// replay reports the recording's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_ms_median: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_ms_p95: Option<f64>,
    pub join_mismatch_classes: Vec<(MismatchClass, usize)>,
    pub attribution: Vec<(Label, usize)>,
    pub llm_calls: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub wall_ms_total: f64,
}

fn mean(v: &[f64]) -> Option<f64> {
    if v.is_empty() {
        None
    } else {
        Some(v.iter().sum::<f64>() / v.len() as f64)
    }
}

fn pct(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        None
    } else {
        Some(sorted[((sorted.len() - 1) as f64 * p).round() as usize])
    }
}

impl Summary {
    pub fn of(results: &[QuestionResult]) -> Summary {
        let covt: Vec<f64> = results.iter().filter_map(|r| r.metrics.cov_t).collect();
        let cova: Vec<f64> = results.iter().filter_map(|r| r.metrics.cov_a).collect();
        let mut solve: Vec<f64> = results.iter().filter_map(|r| r.metrics.solve_ms).collect();
        solve.sort_by(f64::total_cmp);
        let linked: Vec<f64> = results.iter().filter_map(|r| r.metrics.linked_recall).collect();
        let joins: Vec<_> = results.iter().filter_map(|r| r.metrics.join.as_ref()).collect();
        let mut model: Vec<f64> = results.iter().map(|r| r.cost.model_ms).filter(|&m| m > 0.0).collect();
        model.sort_by(f64::total_cmp);
        let tenth = |x: f64| (x * 10.0).round() / 10.0;
        Summary {
            questions: results.len(),
            gold_executable: results.iter().filter(|r| r.metrics.gold == GoldStatus::Ok).count(),
            ex: results.iter().filter(|r| r.metrics.ex == Some(true)).count(),
            esx: results.iter().filter(|r| r.metrics.esx == Some(true)).count(),
            cov_t: mean(&covt),
            cov_a: mean(&cova),
            linked_recall: mean(&linked),
            linked_complete: (!linked.is_empty()).then(|| linked.iter().filter(|&&x| x >= 1.0).count()),
            multi_table: results.iter().filter(|r| r.metrics.gold_tables + r.metrics.gold_extra_instances >= 2).count(),
            join_compared: joins.len(),
            join_matched: joins.iter().filter(|j| j.matched).count(),
            join_exact: joins.iter().filter(|j| j.exact).count(),
            infeasible: results.iter().filter(|r| r.prediction.view_status == Some(SolveStatus::Infeasible)).count(),
            view_runs_ok: results.iter().filter(|r| r.metrics.view_runs == Some(true)).count(),
            view_runs_total: results.iter().filter(|r| r.metrics.view_runs.is_some()).count(),
            solve_ms_median: pct(&solve, 0.5),
            solve_ms_p95: pct(&solve, 0.95),
            model_ms_median: pct(&model, 0.5).map(tenth),
            model_ms_p95: pct(&model, 0.95).map(tenth),
            join_mismatch_classes: MismatchClass::ALL
                .iter()
                .map(|&k| (k, results.iter().filter(|r| r.metrics.join_mismatch == Some(k)).count()))
                .filter(|(_, n)| *n > 0)
                .collect(),
            attribution: Label::ALL
                .iter()
                .map(|&k| (k, results.iter().filter(|r| r.attribution.label == k).count()))
                .filter(|(_, n)| *n > 0)
                .collect(),
            llm_calls: results.iter().map(|r| r.cost.llm_calls as u64).sum(),
            prompt_tokens: results.iter().map(|r| r.cost.prompt_tokens).sum(),
            completion_tokens: results.iter().map(|r| r.cost.completion_tokens).sum(),
            wall_ms_total: results.iter().map(|r| r.cost.wall_ms).sum(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(linked: Option<f64>) -> QuestionResult {
        let mut r: QuestionResult = serde_json::from_value(serde_json::json!({
            "id": "q", "question": "", "gold_sql": "",
            "prediction": {"tables": [], "attributes": []},
            "metrics": {"gold": {"status": "not_run"}, "ex": null, "esx": null, "cov_t": null, "cov_a": null,
                        "join": null, "solve_ms": null},
            "attribution": {"label": "correct"},
            "cost": {"wall_ms": 0.0, "llm_calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "phases": []}
        }))
        .unwrap();
        r.metrics.linked_recall = linked;
        r
    }

    #[test]
    fn the_model_time_is_over_the_questions_that_called_it() {
        let with = |ms: f64| {
            let mut r = result(None);
            r.cost.model_ms = ms;
            r
        };
        let s = Summary::of(&[with(1000.04), with(3000.0), with(0.0), with(2000.0)]);
        assert_eq!((s.model_ms_median, s.model_ms_p95), (Some(2000.0), Some(3000.0)));
        let none = Summary::of(&[with(0.0)]);
        assert_eq!((none.model_ms_median, none.model_ms_p95), (None, None));
        assert_eq!(Summary::of(&[with(1000.04)]).model_ms_median, Some(1000.0));
    }

    #[test]
    fn linked_schema_recall_is_averaged_over_the_questions_with_a_value() {
        let s = Summary::of(&[result(Some(1.0)), result(Some(0.5)), result(None)]);
        assert_eq!(s.linked_recall, Some(0.75));
        assert_eq!(s.linked_complete, Some(1));
        let none = Summary::of(&[result(None)]);
        assert_eq!((none.linked_recall, none.linked_complete), (None, None));
    }
}
