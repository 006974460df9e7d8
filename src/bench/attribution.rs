//! Failure attribution: which phase made a question fail.
//!
//! One primary label per question (the first that applies, in pipeline
//! order) plus every structural finding, so a reader can see e.g. that
//! MatchTables missed a table *and* QueryView wrote wrong SQL.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::sql::analyze::QueryRefs;
use crate::types::trace::Failure;

/// The primary cause of a failed (or unevaluated) question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Label {
    /// ex holds (or, for non-executing suites, every structural check holds).
    Correct,
    /// An LLM call failed (timeout, HTTP error, unusable answer, cassette miss).
    LlmError,
    /// Phase 1 missed a gold table.
    Phase1MissedTable,
    /// Phase 1 found the tables but not every gold attribute.
    Phase1MissedAttribute,
    /// Phase 1 added a table the gold does not need, and the answer is wrong.
    Phase1ExtraTable,
    /// GenerateView found no view (infeasible / solver error).
    Phase2NoView,
    /// The view joins the gold tables differently from the gold SQL.
    Phase2JoinDiffers,
    /// The SQL was rejected by the guard (after the repair round).
    ValidationRejected,
    /// The SQL failed at execution.
    ExecutionError,
    /// The view was right but the SQL answer is not (phase 3).
    Phase3WrongSql,
    /// The direct baseline's SQL answer is wrong (it has no phases).
    WrongSql,
    /// The gold query cannot run on the suite database.
    GoldNotExecutable,
    /// No database: execution metrics not available and no structural fault found.
    NotExecuted,
    /// `--oracle tables`: no SQL was written (phase 3 did not run) and the
    /// view joins the gold tables as the gold SQL does.
    ViewMatchesGold,
}

impl Label {
    pub fn as_str(self) -> &'static str {
        match self {
            Label::Correct => "correct",
            Label::LlmError => "LLM error",
            Label::Phase1MissedTable => "phase 1: missed table",
            Label::Phase1MissedAttribute => "phase 1: missed attribute",
            Label::Phase1ExtraTable => "phase 1: extra table",
            Label::Phase2NoView => "phase 2: no view (infeasible/solver)",
            Label::Phase2JoinDiffers => "phase 2: join differs from gold",
            Label::ValidationRejected => "validation rejection",
            Label::ExecutionError => "execution error",
            Label::Phase3WrongSql => "phase 3: wrong SQL given a correct view",
            Label::WrongSql => "wrong SQL (direct baseline)",
            Label::GoldNotExecutable => "gold not executable",
            Label::NotExecuted => "not executed (no database)",
            Label::ViewMatchesGold => "phase 2 alone: view joins match gold (no SQL phase)",
        }
    }

    pub const ALL: [Label; 14] = [
        Label::Correct,
        Label::LlmError,
        Label::Phase1MissedTable,
        Label::Phase1MissedAttribute,
        Label::Phase1ExtraTable,
        Label::Phase2NoView,
        Label::Phase2JoinDiffers,
        Label::ValidationRejected,
        Label::ExecutionError,
        Label::Phase3WrongSql,
        Label::WrongSql,
        Label::GoldNotExecutable,
        Label::NotExecuted,
        Label::ViewMatchesGold,
    ];
}

/// Attribution of one question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attribution {
    pub label: Label,
    /// Every finding, e.g. `missed table claim`, `extra table agreement`.
    #[serde(default)]
    pub findings: Vec<String>,
}

/// What the run produced, as far as attribution needs it.
#[derive(Debug, Clone, Default)]
pub struct Observed<'a> {
    pub failure: Option<&'a Failure>,
    /// Tables chosen by phase 1 (lower-case); `None` when phase 1 did not run.
    pub phase1_tables: Option<BTreeSet<String>>,
    /// Base columns the view exposes (lower-case `table.column`).
    pub view_columns: Option<BTreeSet<crate::types::ColumnRef>>,
    /// Whether the view's joins match the gold's (None: no view or no gold pairs).
    pub join_matched: Option<bool>,
    /// ex / esx when both results exist.
    pub ex: Option<bool>,
    pub esx: Option<bool>,
    pub gold_executable: bool,
    pub has_database: bool,
    /// The direct baseline answered (no phases to blame).
    pub direct: bool,
    /// No SQL was predicted because the mode stops after GenerateView
    /// (`--oracle tables`): nothing after phase 2 can be blamed.
    pub view_only: bool,
}

/// Attribute one question (see [`Label`] for the order of checks).
pub fn attribute(gold: Option<&QueryRefs>, o: &Observed) -> Attribution {
    let mut findings = Vec::new();
    let mut missed_table = false;
    let mut missed_attr = false;
    let mut extra_table = false;
    if let (Some(g), Some(p1)) = (gold, &o.phase1_tables) {
        for t in g.tables.difference(p1) {
            findings.push(format!("missed table {t}"));
            missed_table = true;
        }
        for t in p1.difference(&g.tables) {
            findings.push(format!("extra table {t}"));
            extra_table = true;
        }
    }
    if let (Some(g), Some(vc)) = (gold, &o.view_columns) {
        for c in g.columns.iter().filter(|c| !vc.contains(c)) {
            // Join keys of the gold are the view's business, not phase 1's.
            let is_key = g.all_pairs().iter().any(|p| &p.left == c || &p.right == c);
            if !is_key {
                findings.push(format!("missed attribute {c}"));
                missed_attr = true;
            }
        }
    }
    if o.join_matched == Some(false) {
        findings.push("view joins differ from gold joins".into());
    }
    let correct = if o.has_database && o.gold_executable { o.ex == Some(true) } else { false };
    let fail_kind = o.failure.map(|f| f.kind.as_str());
    if let Some(f) = o.failure {
        findings.push(format!("{} failed ({}): {}", f.phase, f.kind, f.message));
    }
    let label = if correct {
        Label::Correct
    } else if fail_kind == Some("llm") {
        Label::LlmError
    } else if missed_table {
        Label::Phase1MissedTable
    } else if missed_attr {
        Label::Phase1MissedAttribute
    } else if matches!(fail_kind, Some("infeasible") | Some("solver")) {
        Label::Phase2NoView
    } else if o.join_matched == Some(false) {
        if extra_table {
            Label::Phase1ExtraTable
        } else {
            Label::Phase2JoinDiffers
        }
    } else if o.view_only {
        Label::ViewMatchesGold
    } else if fail_kind == Some("sql_rejected") {
        Label::ValidationRejected
    } else if fail_kind == Some("execution") {
        Label::ExecutionError
    } else if o.has_database && !o.gold_executable {
        Label::GoldNotExecutable
    } else if !o.has_database {
        Label::NotExecuted
    } else if extra_table {
        Label::Phase1ExtraTable
    } else if o.direct {
        Label::WrongSql
    } else {
        Label::Phase3WrongSql
    };
    Attribution { label, findings }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::analyze::analyze;
    use crate::types::{ColumnRef, Dialect};

    fn gold() -> QueryRefs {
        analyze(
            "SELECT c.name FROM client c JOIN account a ON a.client_id = c.id WHERE a.kind = 'x'",
            Dialect::Sqlite,
            None,
        )
        .unwrap()
    }

    fn set(v: &[&str]) -> BTreeSet<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn view_cols() -> BTreeSet<ColumnRef> {
        [("client", "name"), ("client", "id"), ("account", "kind"), ("account", "client_id")]
            .iter()
            .map(|(t, c)| ColumnRef::new(*t, *c))
            .collect()
    }

    fn base() -> Observed<'static> {
        Observed {
            phase1_tables: Some(set(&["account", "client"])),
            view_columns: Some(view_cols()),
            join_matched: Some(true),
            ex: Some(false),
            esx: Some(false),
            gold_executable: true,
            has_database: true,
            failure: None,
            direct: false,
            view_only: false,
        }
    }

    #[test]
    fn correct_wins() {
        let o = Observed { ex: Some(true), ..base() };
        assert_eq!(attribute(Some(&gold()), &o).label, Label::Correct);
    }

    #[test]
    fn phase_order() {
        let g = gold();
        assert_eq!(attribute(Some(&g), &base()).label, Label::Phase3WrongSql);
        // With no SQL phase (oracle tables), a matching view is not a phase-3 failure…
        let view_only = Observed { view_only: true, join_matched: Some(true), ..base() };
        assert_eq!(attribute(Some(&g), &view_only).label, Label::ViewMatchesGold);
        // …and a differing view is still phase 2's.
        let differs = Observed { view_only: true, join_matched: Some(false), ..base() };
        assert_eq!(attribute(Some(&g), &differs).label, Label::Phase2JoinDiffers);
        let o = Observed { phase1_tables: Some(set(&["client"])), ..base() };
        let a = attribute(Some(&g), &o);
        assert_eq!(a.label, Label::Phase1MissedTable);
        assert!(a.findings.contains(&"missed table account".to_string()));
        let mut cols = view_cols();
        cols.remove(&ColumnRef::new("account", "kind"));
        let o = Observed { view_columns: Some(cols), ..base() };
        assert_eq!(attribute(Some(&g), &o).label, Label::Phase1MissedAttribute);
        let o = Observed { join_matched: Some(false), ..base() };
        assert_eq!(attribute(Some(&g), &o).label, Label::Phase2JoinDiffers);
        let o =
            Observed { phase1_tables: Some(set(&["account", "client", "loan"])), join_matched: Some(false), ..base() };
        assert_eq!(attribute(Some(&g), &o).label, Label::Phase1ExtraTable);
        let o = Observed { phase1_tables: Some(set(&["account", "client", "loan"])), ..base() };
        assert_eq!(attribute(Some(&g), &o).label, Label::Phase1ExtraTable);
    }

    #[test]
    fn failures_and_missing_data() {
        let g = gold();
        let f = Failure { phase: "query_view".into(), kind: "sql_rejected".into(), message: "x".into() };
        let o = Observed { failure: Some(&f), ex: None, ..base() };
        assert_eq!(attribute(Some(&g), &o).label, Label::ValidationRejected);
        let f = Failure { phase: "match_tables".into(), kind: "llm".into(), message: "timeout".into() };
        let o = Observed { failure: Some(&f), phase1_tables: None, ..base() };
        assert_eq!(attribute(Some(&g), &o).label, Label::LlmError);
        let f = Failure { phase: "execute".into(), kind: "execution".into(), message: "no such column".into() };
        let o = Observed { failure: Some(&f), ex: None, ..base() };
        assert_eq!(attribute(Some(&g), &o).label, Label::ExecutionError);
        let o = Observed { has_database: false, ex: None, ..base() };
        assert_eq!(attribute(Some(&g), &o).label, Label::NotExecuted);
        let o = Observed { gold_executable: false, ex: None, ..base() };
        assert_eq!(attribute(Some(&g), &o).label, Label::GoldNotExecutable);
        let o = Observed { direct: true, phase1_tables: None, view_columns: None, join_matched: None, ..base() };
        assert_eq!(attribute(Some(&g), &o).label, Label::WrongSql);
    }
}
