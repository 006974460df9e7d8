//! `--inner-branches named|off` (issue 23): after QueryView's SQL runs,
//! the pattern branch the answer is about is joined by INNER JOIN instead
//! of LEFT JOIN, and the same SQL runs again. No LLM call.
//!
//! The view LEFT-joins a pattern's branches (Lucy §3.3) so that one view
//! can hold a payment amount that is a tax *or* a supercharge *or* an
//! income: a row without that branch keeps NULLs there. When the answer
//! is about one branch — the question names it word for word and the SQL
//! reads its columns — those NULL rows are lucy's padding, not rows the
//! question asked about: "the total income amount per income source"
//! grouped a NULL source of every tax and supercharge amount; "the total
//! retention bonus amount per client" listed the clients whose retention
//! gave no bonus. DDO's gold SQL INNER-joins the branch in both.
//!
//! It stays a LEFT JOIN when the SQL asks about missing rows (`NULL`,
//! `COALESCE`, `IFNULL`, `NVL`), when the question negates ("no", "not",
//! "without", …), when the SQL or the question touches two branches that
//! do not lie on one chain from the walk (`TAX` and `SUPERCHARGE`: the
//! amounts that are one *or* the other), with `--keep`, and for `SELECT *`.
//! When the new view lacks a column or the SQL fails on it, the first
//! answer stands. The trace's `inner_branches` section says what happened.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::graph::{SchemaGraph, TableId};
use crate::sql::exec::{Database, ExecOptions};
use crate::types::trace::InnerBranchTrace;
use crate::types::{JoinKind, ViewRequest, ViewResult};

/// `lucy ask`'s and `lucy bench`'s `--inner-branches` by default.
///
/// `named` since session 19. Replaying the committed recordings (no model
/// call) with session 18's defaults: DDO 14 → 16 (DDO-10 "the total income
/// amount per income source", DDO-15 "the total retention bonus amount per
/// client"; it also fired on DDO-11, right either way, and DDO-17, wrong
/// either way), ACME's 44 13 → 13 and the Spider sample's 100 63 → 63 (it
/// fires on neither: no ACME answer reads a named LEFT-joined branch,
/// Spider's models have no patterns).
pub const DEFAULT: InnerBranches = InnerBranches::Named;

/// When [`inner`] runs (`--inner-branches`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InnerBranches {
    /// Never: branches stay LEFT JOINs.
    Off,
    /// A branch the question names and the SQL reads ([`chosen`]).
    Named,
}

/// Question words that ask about missing rows: a LEFT JOIN's NULLs may be
/// the answer.
const NEGATIONS: &[&str] = &[
    "no", "not", "without", "never", "none", "nobody", "nothing", "neither", "nor", "zero", "missing", "lack", "lacks",
];

/// Whether the question asks about missing rows ([`NEGATIONS`]).
pub fn negates(question: &str) -> bool {
    crate::model::resolve::words(question).iter().any(|w| NEGATIONS.contains(&w.to_ascii_lowercase().as_str()))
}

/// SQL words that read a LEFT JOIN's NULLs.
const NULL_WORDS: &[&str] = &["NULL", "COALESCE", "IFNULL", "NVL", "ISNULL", "NULLIF"];

/// The LEFT-joined branch to INNER-join after an answer: the one deepest
/// table of the branches the SQL reads (`used`: view column aliases) or
/// the question names (`named`), when they all lie on one chain from the
/// walk, that deepest table is named *and* read, and neither the question
/// (`question`) nor the SQL (`written`) asks about missing rows. `None`
/// otherwise.
pub fn chosen(
    view: &ViewResult,
    used: &BTreeSet<String>,
    named: &[TableId],
    question: &str,
    written: &str,
) -> Option<TableId> {
    if negates(question) {
        return None;
    }
    let sql_words: BTreeSet<String> =
        written.split(|c: char| !(c.is_alphanumeric() || c == '_')).map(|w| w.to_ascii_uppercase()).collect();
    if NULL_WORDS.iter().any(|w| sql_words.contains(*w)) {
        return None;
    }
    // Each LEFT-joined plain instance and the instance it hangs off.
    let parent_of = |alias: &str| {
        view.joins
            .iter()
            .find(|j| j.kind == JoinKind::Left && j.right.eq_ignore_ascii_case(alias))
            .map(|j| j.left.as_str())
    };
    let plain = |alias: &str| view.instances.iter().find(|i| i.alias.eq_ignore_ascii_case(alias) && i.role.is_none());
    let read: BTreeSet<&str> = view
        .grain
        .columns
        .iter()
        .filter(|c| used.iter().any(|u| u.eq_ignore_ascii_case(&c.alias)))
        .map(|c| c.instance.as_str())
        .collect();
    let touched: Vec<(&str, TableId)> = view
        .joins
        .iter()
        .filter(|j| j.kind == JoinKind::Left)
        .filter_map(|j| plain(&j.right).map(|i| (j.right.as_str(), i.table)))
        .filter(|(alias, t)| read.contains(alias) || named.contains(t))
        .collect();
    // The chain from a branch up to the walk.
    let chain = |alias: &str| {
        let mut up = vec![alias.to_string()];
        let mut cur = alias.to_string();
        while let Some(p) = parent_of(&cur) {
            if up.iter().any(|x| x.eq_ignore_ascii_case(p)) {
                break;
            }
            up.push(p.to_string());
            cur = p.to_string();
        }
        up
    };
    // The deepest touched branch: every other touched one is on its chain.
    let (alias, table) = touched.iter().copied().find(|(alias, _)| {
        let up = chain(alias);
        touched.iter().all(|(other, _)| up.iter().any(|x| x.eq_ignore_ascii_case(other)))
    })?;
    (named.contains(&table) && read.contains(alias)).then_some(table)
}

/// What [`inner`] did.
pub type Inner = super::rerun::Reran<InnerBranchTrace>;

/// Solve `request` again with branch `t` INNER-joined and run `sql`
/// (QueryView's query after lucy's rewrites) over the new view; the view
/// and rows when every used column is still there and the SQL runs.
#[allow(clippy::too_many_arguments)]
pub fn inner(
    graph: &SchemaGraph,
    request: &ViewRequest,
    t: TableId,
    used: &BTreeSet<String>,
    sql: &str,
    db: &Database,
    exec: &ExecOptions,
) -> Inner {
    let table = graph.name(t).to_string();
    let req = ViewRequest { inner_branches: vec![table.clone()], ..request.clone() };
    let run = super::rerun::solve_and_run(graph, req, used, sql, "new", db, exec);
    Inner::from_run(run, |rerun| InnerBranchTrace { tables: vec![table], rerun })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::fixtures::ddo;
    use crate::pipeline::narrow::used_columns;
    use crate::sql::exec::{run, ViewDef};
    use crate::types::ViewColumns;

    fn view(g: &SchemaGraph, tables: &[&str], inner: &[&str]) -> ViewResult {
        let req = ViewRequest {
            columns: ViewColumns::All,
            inner_branches: inner.iter().map(|t| t.to_string()).collect(),
            ..ViewRequest::new(tables.iter().map(|t| t.to_string()).collect())
        };
        crate::solve::generate_view(g, &req).unwrap()
    }

    fn pick(g: &SchemaGraph, v: &ViewResult, question: &str, sql: &str) -> Option<String> {
        let used = used_columns(sql, sql, v).unwrap();
        let in_view: Vec<TableId> = v.instances.iter().map(|i| i.table).collect();
        let named = crate::link::named::core_tables(g, question, &in_view, &[]);
        chosen(v, &used, &named, question, sql).map(|t| g.name(t).to_string())
    }

    fn kinds(v: &ViewResult) -> Vec<String> {
        v.joins.iter().map(|j| format!("{:?} {}", j.kind, j.right)).collect()
    }

    #[test]
    fn the_view_joins_a_named_branch_and_the_branches_above_it_inner() {
        let g = ddo();
        let left = view(&g, &["PAYMENT", "INCOME"], &[]);
        assert_eq!(kinds(&left), ["Left PAYAMOUNT", "Left INCOME"]);
        let inner = view(&g, &["PAYMENT", "INCOME"], &["INCOME"]);
        assert_eq!(kinds(&inner), ["Inner PAYAMOUNT", "Inner INCOME"]);
        // A branch above it only: the one below stays a LEFT JOIN.
        let mid = view(&g, &["PAYMENT", "INCOME"], &["PAYAMOUNT"]);
        assert_eq!(kinds(&mid), ["Inner PAYAMOUNT", "Left INCOME"]);
        // A table the view does not join: a clear error, not a silent view.
        let req = ViewRequest { inner_branches: vec!["CLIENT".into()], ..ViewRequest::new(vec!["PAYMENT".into()]) };
        let e = crate::solve::generate_view(&g, &req).unwrap_err().to_string();
        assert!(e.contains("inner branch CLIENT") && e.contains("does not join it"), "{e}");
        // `keep` wins: every table by LEFT JOIN.
        let req = ViewRequest {
            keep: Some("PAYMENT".into()),
            inner_branches: vec!["INCOME".into()],
            ..ViewRequest::new(vec!["PAYMENT".into(), "INCOME".into()])
        };
        let kept = crate::solve::generate_view(&g, &req).unwrap();
        assert!(kept.joins.iter().all(|j| j.kind == JoinKind::Left), "{:?}", kinds(&kept));
    }

    #[test]
    fn the_branch_the_question_names_and_the_sql_reads_is_chosen() {
        let g = ddo();
        let v = view(&g, &["PAYMENT", "INCOME"], &[]);
        let q = "What is the total income amount per income source?";
        let sql = "SELECT INCOME_source, SUM(PAYAMOUNT_amount) FROM lucy_view GROUP BY INCOME_source";
        assert_eq!(pick(&g, &v, q, sql).as_deref(), Some("INCOME"));
        // Named but not read, or read but not named: left alone.
        let amounts = "SELECT SUM(PAYAMOUNT_amount) FROM lucy_view";
        assert_eq!(pick(&g, &v, q, amounts), None);
        assert_eq!(pick(&g, &v, "What is the total amount per source?", sql), None);
        // Missing rows asked about, in the question or the SQL.
        assert_eq!(pick(&g, &v, "Which payments have no income source?", sql), None);
        let nulls = "SELECT PAYMENT_id FROM lucy_view WHERE INCOME_source IS NULL";
        assert_eq!(pick(&g, &v, "Which payments lack an income source?", nulls), None);
        let coalesced = "SELECT COALESCE(INCOME_source, 'none'), SUM(PAYAMOUNT_amount) FROM lucy_view GROUP BY 1";
        assert_eq!(pick(&g, &v, q, coalesced), None);
        // Two branches of one node (an amount is a tax *or* a supercharge):
        // INNER-joining either would drop the other's rows.
        let both = view(&g, &["PAYMENT", "TAX", "SUPERCHARGE"], &[]);
        let q2 = "What is the sum of the tax rates and supercharge reasons?";
        let sql2 = "SELECT SUM(TAX_rate), COUNT(SUPERCHARGE_reason) FROM lucy_view";
        assert_eq!(pick(&g, &both, q2, sql2), None);
        // The other one named but not read still counts as touched.
        let sql3 = "SELECT SUM(TAX_rate) FROM lucy_view";
        assert_eq!(pick(&g, &both, q2, sql3), None);
        assert_eq!(pick(&g, &both, "What is the sum of the tax rates?", sql3).as_deref(), Some("TAX"));
    }

    #[test]
    fn the_same_sql_runs_over_the_inner_view_and_drops_the_padding() {
        let g = ddo();
        let tables = ["PAYMENT", "INCOME"];
        let req = ViewRequest { columns: ViewColumns::All, ..ViewRequest::new(tables.map(String::from).to_vec()) };
        let v = crate::solve::generate_view(&g, &req).unwrap();
        let sql = "SELECT INCOME_source, COUNT(*) FROM lucy_view GROUP BY INCOME_source";
        let used = used_columns(sql, sql, &v).unwrap();
        let db = Database::Sqlite(concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.sqlite").into());
        let exec = ExecOptions { limit: None, timeout: std::time::Duration::from_secs(10), max_result_bytes: 1 << 24 };
        let before = run(&db, Some(ViewDef::from(v.body.as_ref().unwrap())), sql, &exec).unwrap();
        assert!(before.rows.iter().any(|r| matches!(r[0], crate::sql::exec::SqlValue::Null)), "a NULL group first");
        let income = g.table_id("INCOME").unwrap();
        let Inner::Used(nv, rows, it) = inner(&g, &req, income, &used, sql, &db, &exec) else { panic!("not used") };
        assert_eq!(it.tables, ["INCOME"]);
        assert_eq!(it.rerun.view.as_ref().unwrap().request.inner_branches, ["INCOME"]);
        assert!(nv.view_sql.contains("INNER JOIN INCOME"), "{}", nv.view_sql);
        assert_eq!(rows.rows.len(), before.rows.len() - 1);
        assert!(!rows.rows.iter().any(|r| matches!(r[0], crate::sql::exec::SqlValue::Null)));
        // The SQL failing on the new view leaves the first answer.
        let Inner::Tried(it) = inner(&g, &req, income, &used, "SELECT nope FROM lucy_view", &db, &exec) else {
            panic!("used a failing SQL")
        };
        assert!(it.rerun.note.unwrap().contains("failed"));
    }
}
