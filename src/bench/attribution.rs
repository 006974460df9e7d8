//! Failure attribution: which phase made a question fail.
//!
//! One primary label per question (the first that applies, in pipeline
//! order) plus every structural finding, so a reader can see e.g. that
//! MatchTables missed a table *and* QueryView wrote wrong SQL.
//!
//! A table is *missed* when the view lacks it: MatchTables names the
//! tables a question is about and GenerateView adds the tables that connect
//! them, so a gold table phase 1 did not name but the solver joined is in
//! the view and is not a miss (it is listed as a finding). A gold table
//! instance the view lacks while it holds the table in another instance
//! (another role, or the plain table where the gold uses a role) is the
//! view joining differently, phase 2's label. Labels and their order are
//! documented in `docs/benchmarks.md` ("Failure attribution").

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
    /// A gold table is absent from the view (or, with no view, from what
    /// phase 1 asked for) and phase 1 did not name it.
    Phase1MissedTable,
    /// Every gold table is in the view but a non-key gold column is not.
    Phase1MissedAttribute,
    /// Phase 1 named a table the gold does not use, and the view's joins
    /// differ from the gold's (or, with no join to compare, the answer is
    /// wrong), while the view holds every gold instance.
    Phase1ExtraTable,
    /// GenerateView found no view (infeasible / solver error).
    Phase2NoView,
    /// Every gold table is in the view, but the view joins them differently
    /// from the gold SQL, holds a gold table only as another instance, or
    /// lacks a table phase 1 named.
    Phase2JoinDiffers,
    /// The SQL was rejected by the guard after the repair round (the direct
    /// baseline, which has no view).
    ValidationRejected,
    /// QueryView's SQL (after the repair round) names a column or table the
    /// view lacks: refused by the guard, or failing at execution for it.
    Phase3NameViewLacks,
    /// QueryView's SQL was refused by the guard after the repair round for
    /// another reason than a name (unparseable, cut off, not a SELECT).
    Phase3SqlRejected,
    /// The SQL failed at execution (for another reason than an unknown name).
    ExecutionError,
    /// The view holds the gold tables and joins, the SQL ran, and its rows
    /// are not the gold's (phase 3).
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
    /// The label as reports print it.
    pub fn as_str(self) -> &'static str {
        match self {
            Label::Correct => "correct",
            Label::LlmError => "LLM error",
            Label::Phase1MissedTable => "phase 1: missed a table",
            Label::Phase1MissedAttribute => "phase 1: missed an attribute",
            Label::Phase1ExtraTable => "phase 1: extra table",
            Label::Phase2NoView => "phase 2: no view (infeasible/solver)",
            Label::Phase2JoinDiffers => "phase 2: joined differently",
            Label::ValidationRejected => "validation rejection",
            Label::Phase3NameViewLacks => "phase 3: a name the view lacks",
            Label::Phase3SqlRejected => "phase 3: SQL rejected (not a name)",
            Label::ExecutionError => "execution error",
            Label::Phase3WrongSql => "phase 3: wrong SQL over a correct view",
            Label::WrongSql => "wrong SQL (direct baseline)",
            Label::GoldNotExecutable => "gold not executable",
            Label::NotExecuted => "not executed (no database)",
            Label::ViewMatchesGold => "phase 2 alone: view joins match gold (no SQL phase)",
        }
    }

    /// Every label, in report order.
    pub const ALL: [Label; 16] = [
        Label::Correct,
        Label::LlmError,
        Label::Phase1MissedTable,
        Label::Phase1MissedAttribute,
        Label::Phase1ExtraTable,
        Label::Phase2NoView,
        Label::Phase2JoinDiffers,
        Label::ValidationRejected,
        Label::Phase3NameViewLacks,
        Label::Phase3SqlRejected,
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

/// The tables of a view, as attribution compares them with the gold's.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ViewTables {
    /// Base tables of the view's instances (lower-case).
    pub tables: BTreeSet<String>,
    /// The view's instances by `bench::instances::instance_key`
    /// (lower-case `table` or `table@role`, `#N` for a further copy).
    pub instances: BTreeSet<String>,
}

/// What the run produced, as far as attribution needs it.
#[derive(Debug, Clone, Default)]
pub struct Observed<'a> {
    pub failure: Option<&'a Failure>,
    /// Tables chosen by phase 1 (lower-case; role instances as
    /// `table@role`); `None` when phase 1 did not run (given by an oracle).
    pub phase1_tables: Option<BTreeSet<String>>,
    /// The view's tables and instances; `None` when there is no view.
    pub view_tables: Option<ViewTables>,
    /// The gold query's table instances, keyed as [`ViewTables::instances`]
    /// (empty when unknown: only base tables are then compared).
    pub gold_instances: BTreeSet<String>,
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

/// The base table of an instance key or phase-1 label (`table@role#2` → `table`).
fn base(key: &str) -> &str {
    key.split('@').next().unwrap_or(key)
}

/// Whether an error message says the SQL names a column or table that is
/// not there: the guard's unknown-name messages (`sql::guard`), and the
/// engines' own (SQLite `no such column`, PostgreSQL `does not exist`,
/// MySQL `Unknown column`). A unit test pins the guard's wording.
pub fn names_unknown_name(message: &str) -> bool {
    const MARKERS: [&str; 8] = [
        "is not a column of",
        "is not allowed: the query may read only",
        "defines no column",
        "nor an alias in scope",
        "no such column",
        "no such table",
        "unknown column",
        "does not exist",
    ];
    let m = message.to_ascii_lowercase();
    MARKERS.iter().any(|k| m.contains(k))
}

/// Attribute one question (see [`Label`] for the order of checks).
pub fn attribute(gold: Option<&QueryRefs>, o: &Observed) -> Attribution {
    let mut findings = Vec::new();
    let named = |t: &str| o.phase1_tables.as_ref().is_some_and(|p| p.iter().any(|n| base(n) == t));
    let mut missed_table = false;
    let mut missed_attr = false;
    let mut extra_table = false;
    let mut view_differs = false;
    if let Some(g) = gold {
        match &o.view_tables {
            Some(v) => {
                for t in &g.tables {
                    if v.tables.contains(t) {
                        if o.phase1_tables.is_some() && !named(t) {
                            findings.push(format!("table {t} joined by the solver (not named by phase 1)"));
                        }
                    } else if o.phase1_tables.is_some() && !named(t) {
                        findings.push(format!("missed table {t}"));
                        missed_table = true;
                    } else {
                        let by = if o.phase1_tables.is_some() { "named by phase 1" } else { "given" };
                        findings.push(format!("table {t} {by} but not in the view"));
                        view_differs = true;
                    }
                }
                for k in o.gold_instances.iter().filter(|k| !v.instances.contains(*k)) {
                    let t = base(k);
                    if v.tables.contains(t) {
                        let held: Vec<&str> = v.instances.iter().filter(|i| base(i) == t).map(String::as_str).collect();
                        findings
                            .push(format!("gold instance {k} not in the view, which holds {t} as {}", held.join(", ")));
                        view_differs = true;
                    }
                }
            }
            // No view: what phase 1 asked the solver for is all there is.
            None => {
                if o.phase1_tables.is_some() {
                    for t in g.tables.iter().filter(|t| !named(t)) {
                        findings.push(format!("missed table {t}"));
                        missed_table = true;
                    }
                }
            }
        }
        if let Some(p1) = &o.phase1_tables {
            for t in p1.iter().filter(|t| !g.tables.contains(base(t))) {
                // A table the answer's view no longer holds (narrowing
                // dropped it after the SQL ran) cost nothing.
                if o.view_tables.as_ref().is_some_and(|v| !v.tables.contains(base(t))) {
                    findings.push(format!("extra table {t}, not in the answer's view"));
                } else {
                    findings.push(format!("extra table {t}"));
                    extra_table = true;
                }
            }
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
    let unknown_name = o.failure.is_some_and(|f| names_unknown_name(&f.message));
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
    } else if view_differs {
        // A gold instance the view holds only another way loses the
        // question whatever else phase 1 added.
        Label::Phase2JoinDiffers
    } else if o.join_matched == Some(false) && extra_table {
        Label::Phase1ExtraTable
    } else if o.join_matched == Some(false) {
        Label::Phase2JoinDiffers
    } else if o.view_only {
        Label::ViewMatchesGold
    } else if fail_kind == Some("sql_rejected") {
        if o.direct {
            Label::ValidationRejected
        } else if unknown_name {
            Label::Phase3NameViewLacks
        } else {
            Label::Phase3SqlRejected
        }
    } else if fail_kind == Some("execution") {
        if !o.direct && unknown_name {
            Label::Phase3NameViewLacks
        } else {
            Label::ExecutionError
        }
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

    fn view(instances: &[&str]) -> ViewTables {
        ViewTables { tables: instances.iter().map(|i| base(i).to_string()).collect(), instances: set(instances) }
    }

    fn view_cols() -> BTreeSet<ColumnRef> {
        [("client", "name"), ("client", "id"), ("account", "kind"), ("account", "client_id")]
            .iter()
            .map(|(t, c)| ColumnRef::new(*t, *c))
            .collect()
    }

    fn base_obs() -> Observed<'static> {
        Observed {
            phase1_tables: Some(set(&["account", "client"])),
            view_tables: Some(view(&["account", "client"])),
            gold_instances: set(&["account", "client"]),
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

    fn failure(phase: &str, kind: &str, message: &str) -> Failure {
        Failure { phase: phase.into(), kind: kind.into(), message: message.into() }
    }

    #[test]
    fn correct_wins() {
        let o = Observed { ex: Some(true), ..base_obs() };
        assert_eq!(attribute(Some(&gold()), &o).label, Label::Correct);
    }

    #[test]
    fn a_table_the_solver_joined_is_not_a_miss() {
        // Phase 1 named only CLIENT; the solver joined ACCOUNT to it.
        let o = Observed { phase1_tables: Some(set(&["client"])), ..base_obs() };
        let a = attribute(Some(&gold()), &o);
        assert_eq!(a.label, Label::Phase3WrongSql, "{a:?}");
        assert!(!a.findings.iter().any(|f| f.starts_with("missed table")), "{a:?}");
        assert!(a.findings.contains(&"table account joined by the solver (not named by phase 1)".to_string()));
    }

    #[test]
    fn a_gold_table_the_view_lacks_is_a_miss() {
        let o = Observed {
            phase1_tables: Some(set(&["client"])),
            view_tables: Some(view(&["client"])),
            join_matched: None,
            ..base_obs()
        };
        let a = attribute(Some(&gold()), &o);
        assert_eq!(a.label, Label::Phase1MissedTable);
        assert!(a.findings.contains(&"missed table account".to_string()), "{a:?}");
        // With no view at all, phase 1's request is what is compared.
        let f = failure("match_tables", "nothing_matched", "MatchTables found no relevant table");
        let o = Observed {
            failure: Some(&f),
            phase1_tables: Some(set(&["client"])),
            view_tables: None,
            view_columns: None,
            join_matched: None,
            ..base_obs()
        };
        assert_eq!(attribute(Some(&gold()), &o).label, Label::Phase1MissedTable);
    }

    #[test]
    fn a_gold_instance_held_another_way_is_phase_2() {
        // The gold joins ACCOUNT in the role `owner`; the view holds only
        // the plain ACCOUNT (a table the view has, through another path).
        let o = Observed { gold_instances: set(&["account@owner", "client"]), ..base_obs() };
        let a = attribute(Some(&gold()), &o);
        assert_eq!(a.label, Label::Phase2JoinDiffers, "{a:?}");
        assert!(
            a.findings.contains(&"gold instance account@owner not in the view, which holds account as account".into()),
            "{a:?}"
        );
        // …even when phase 1 also named a table the gold does not use.
        let o = Observed {
            gold_instances: set(&["account@owner", "client"]),
            phase1_tables: Some(set(&["account", "client", "loan"])),
            view_tables: Some(view(&["account", "client", "loan"])),
            join_matched: Some(false),
            ..base_obs()
        };
        assert_eq!(attribute(Some(&gold()), &o).label, Label::Phase2JoinDiffers);
        // Phase 1 named a table the view lacks: the solver's doing.
        let o = Observed { view_tables: Some(view(&["client"])), join_matched: None, ..base_obs() };
        let a = attribute(Some(&gold()), &o);
        assert_eq!(a.label, Label::Phase2JoinDiffers, "{a:?}");
        assert!(a.findings.contains(&"table account named by phase 1 but not in the view".into()));
        // A role label phase 1 named stands for its table.
        let o = Observed { phase1_tables: Some(set(&["account@owner", "client"])), ..base_obs() };
        let a = attribute(Some(&gold()), &o);
        assert_eq!(a.label, Label::Phase3WrongSql, "{a:?}");
    }

    #[test]
    fn each_label_in_pipeline_order() {
        let g = gold();
        assert_eq!(attribute(Some(&g), &base_obs()).label, Label::Phase3WrongSql);
        // With no SQL phase (oracle tables), a matching view is not a phase-3 failure…
        let view_only = Observed { view_only: true, join_matched: Some(true), ..base_obs() };
        assert_eq!(attribute(Some(&g), &view_only).label, Label::ViewMatchesGold);
        // …and a differing view is still phase 2's.
        let differs = Observed { view_only: true, join_matched: Some(false), ..base_obs() };
        assert_eq!(attribute(Some(&g), &differs).label, Label::Phase2JoinDiffers);
        let mut cols = view_cols();
        cols.remove(&ColumnRef::new("account", "kind"));
        let o = Observed { view_columns: Some(cols), ..base_obs() };
        assert_eq!(attribute(Some(&g), &o).label, Label::Phase1MissedAttribute);
        let o = Observed { join_matched: Some(false), ..base_obs() };
        assert_eq!(attribute(Some(&g), &o).label, Label::Phase2JoinDiffers);
        let o = Observed {
            phase1_tables: Some(set(&["account", "client", "loan"])),
            view_tables: Some(view(&["account", "client", "loan"])),
            join_matched: Some(false),
            ..base_obs()
        };
        let a = attribute(Some(&g), &o);
        assert_eq!(a.label, Label::Phase1ExtraTable);
        assert!(a.findings.contains(&"extra table loan".to_string()));
        // Phase 1 named it, but the answer's view does not hold it (narrowing
        // dropped it after the SQL ran): it cost nothing, phase 3 lost.
        let o = Observed { phase1_tables: Some(set(&["account", "client", "loan"])), ..base_obs() };
        let a = attribute(Some(&g), &o);
        assert_eq!(a.label, Label::Phase3WrongSql, "{a:?}");
        assert!(a.findings.contains(&"extra table loan, not in the answer's view".to_string()), "{a:?}");
        // Without a view, what phase 1 named is all there is.
        let o = Observed { phase1_tables: Some(set(&["account", "client", "loan"])), view_tables: None, ..base_obs() };
        assert_eq!(attribute(Some(&g), &o).label, Label::Phase1ExtraTable);
        let f = failure("generate_view", "infeasible", "GenerateView infeasible: no walk");
        let o = Observed { failure: Some(&f), view_tables: None, view_columns: None, join_matched: None, ..base_obs() };
        assert_eq!(attribute(Some(&g), &o).label, Label::Phase2NoView);
    }

    /// The guard's refusals of a name the view lacks, as it words them.
    fn guard_error(sql: &str) -> String {
        let cols = vec!["CLIENT_name".to_string(), "ACCOUNT_kind".to_string()];
        match crate::sql::guard::check_query(sql, "lucy_view", &cols, Dialect::Sqlite) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("the guard accepted {sql}"),
        }
    }

    #[test]
    fn phase_3_failures() {
        let g = gold();
        for sql in [
            "SELECT CLIENT_CLIENT_name FROM lucy_view",
            "SELECT name FROM CLIENT",
            "SELECT v.CLIENT_nam FROM lucy_view v",
            "SELECT x.CLIENT_name FROM lucy_view v",
        ] {
            let msg = format!("QueryView SQL rejected after the repair round: {}", guard_error(sql));
            assert!(names_unknown_name(&msg), "{sql}: {msg}");
            let f = failure("query_view", "sql_rejected", &msg);
            let o = Observed { failure: Some(&f), ex: Some(false), ..base_obs() };
            assert_eq!(attribute(Some(&g), &o).label, Label::Phase3NameViewLacks, "{sql}");
            // The direct baseline has no view: its refusals keep their label.
            let o = Observed { direct: true, phase1_tables: None, view_tables: None, view_columns: None, ..o };
            assert_eq!(attribute(Some(&g), &o).label, Label::ValidationRejected, "{sql}");
        }
        let msg = guard_error("SELECT CLIENT_name FROM lucy_view WHERE CLIENT_name = 'unterminated");
        assert!(!names_unknown_name(&msg), "{msg}");
        let f = failure("query_view", "sql_rejected", &msg);
        let o = Observed { failure: Some(&f), ..base_obs() };
        assert_eq!(attribute(Some(&g), &o).label, Label::Phase3SqlRejected);
        // A name the guard let through and the engine refused.
        let f = failure(
            "execute",
            "execution",
            "execution failed after the repair round: no such column: Claim_Claim_Number",
        );
        let o = Observed { failure: Some(&f), ..base_obs() };
        assert_eq!(attribute(Some(&g), &o).label, Label::Phase3NameViewLacks);
        let f = failure("execute", "execution", "execution failed after the repair round: interrupted (timeout)");
        let o = Observed { failure: Some(&f), ..base_obs() };
        assert_eq!(attribute(Some(&g), &o).label, Label::ExecutionError);
    }

    #[test]
    fn failures_and_missing_data() {
        let g = gold();
        let f = failure("match_tables", "llm", "timeout");
        let o = Observed { failure: Some(&f), phase1_tables: None, view_tables: None, ..base_obs() };
        assert_eq!(attribute(Some(&g), &o).label, Label::LlmError);
        let o = Observed { has_database: false, ex: None, ..base_obs() };
        assert_eq!(attribute(Some(&g), &o).label, Label::NotExecuted);
        let o = Observed { gold_executable: false, ex: None, ..base_obs() };
        assert_eq!(attribute(Some(&g), &o).label, Label::GoldNotExecutable);
        let o = Observed {
            direct: true,
            phase1_tables: None,
            view_tables: None,
            view_columns: None,
            join_matched: None,
            ..base_obs()
        };
        assert_eq!(attribute(Some(&g), &o).label, Label::WrongSql);
    }

    #[test]
    fn every_label_has_its_own_text() {
        let texts: BTreeSet<&str> = Label::ALL.iter().map(|l| l.as_str()).collect();
        assert_eq!(texts.len(), Label::ALL.len());
    }
}
