//! `--narrow-view on|empty` (issue 23): after QueryView's SQL runs, the relevant
//! tables it reads no column of are dropped, GenerateView solves again for
//! the rest, and the same SQL runs over the narrower view. A table MatchTables
//! listed in excess can only remove rows (an inner join with no match) or
//! repeat them; the SQL shows which tables the answer needs. No LLM call.
//!
//! Role instances stay; a query that selects `*` is left alone; when the
//! narrower view lacks a column the SQL reads, or the SQL fails on it, the
//! first answer stands. The trace's `narrowed` section says what happened.
//! With `empty` ([`NarrowView::Empty`]) this happens only when the first
//! answer has no row: the join of the tables the SQL does not read left
//! nothing (Spider's `players` joined to a `rankings` with no matching row).
//! With `unnamed` ([`NarrowView::Unnamed`], the default) it happens after
//! every answer, but a table the question names word for word stays: a
//! table the SQL reads nothing of and the question does not name is the
//! likeliest excess, while "template ids used for documents" means the
//! documents' join.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::graph::{SchemaGraph, TableId};
use crate::sql::exec::{ExecOptions, QueryRows};
use crate::types::trace::NarrowTrace;
use crate::types::{Relevance, ViewRequest, ViewResult};

/// `lucy ask`'s and `lucy bench`'s `--narrow-view`: `unnamed` since
/// session 18. Replaying the committed recordings (no model call) with
/// session 17's other defaults, against `empty` (session 17's default): the
/// Spider sample's 100 60 → 62 (276, 829: a `show` or `evaluation` table
/// the vote added dropped the rows without one; none lost, where `on` lost
/// 306, 310, 331 and 934, whose questions name the table the SQL reads
/// nothing of), DDO 13 → 14 (DDO-11), ACME's first 24 6 → 6; with session
/// 10's flags DDO 12 → 13, ACME 4 → 4, Spider's first 50 29 → 31 (+3 −1).
pub const DEFAULT: NarrowView = NarrowView::Unnamed;

/// When [`narrow`] runs (`--narrow-view`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum NarrowView {
    /// Never: the first answer stands.
    Off,
    /// Only when the first answer has no row.
    Empty,
    /// After every answer that ran.
    On,
    /// After every answer that ran, but a table the question names word
    /// for word (`link::named::core_tables`) is never dropped: "template
    /// ids used for documents" keeps `Documents` although the SQL reads
    /// nothing of it.
    Unnamed,
}

impl NarrowView {
    /// Whether to try narrowing after an answer with these rows.
    pub fn applies(self, rows: &QueryRows) -> bool {
        match self {
            NarrowView::Off => false,
            NarrowView::Empty => rows.rows.is_empty(),
            NarrowView::On | NarrowView::Unnamed => true,
        }
    }
}

/// Reads `"off"`, `"empty"`, `"on"`, and the booleans older traces and API
/// bodies hold (`true` is `on`).
impl<'de> Deserialize<'de> for NarrowView {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Either {
            Bool(bool),
            Name(String),
        }
        match Either::deserialize(d)? {
            Either::Bool(b) => Ok(if b { NarrowView::On } else { NarrowView::Off }),
            Either::Name(n) => match n.to_ascii_lowercase().as_str() {
                "off" => Ok(NarrowView::Off),
                "empty" => Ok(NarrowView::Empty),
                "on" => Ok(NarrowView::On),
                "unnamed" => Ok(NarrowView::Unnamed),
                other => Err(serde::de::Error::custom(format!(
                    "narrow_view `{other}`: expected \"off\", \"empty\", \"on\" or \"unnamed\" (or a boolean)"
                ))),
            },
        }
    }
}

/// The view columns `sql` names (identifiers compared case-insensitively,
/// quotes dropped), or `None` when `written` (the query as QueryView wrote
/// it, before lucy's fan-out or DISTINCT rewrite wrapped it in a `SELECT *`)
/// selects `*` (every column).
pub fn used_columns(sql: &str, written: &str, view: &ViewResult) -> Option<BTreeSet<String>> {
    let flat = written.split_whitespace().collect::<Vec<_>>().join(" ").to_ascii_uppercase();
    let star = flat.contains(".*")
        || ["SELECT *", "SELECT DISTINCT *", ", *"].iter().any(|p| flat.contains(p))
        || flat.contains(",*");
    if star {
        return None;
    }
    let tokens: BTreeSet<String> = sql
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|t| !t.is_empty())
        .map(|t| t.to_ascii_lowercase())
        .collect();
    Some(
        view.columns
            .iter()
            .filter(|c| tokens.contains(&c.alias.to_ascii_lowercase()))
            .map(|c| c.alias.clone())
            .collect(),
    )
}

/// The relevance without the plain tables none of `used`'s columns belongs
/// to (role instances, `keep` and the tables of `named` stay), and the names it dropped; `None`
/// when it would drop nothing or everything.
pub fn narrower(
    graph: &SchemaGraph,
    found: &Relevance,
    view: &ViewResult,
    used: &BTreeSet<String>,
    keep: Option<&str>,
    named: &[TableId],
) -> Option<(Relevance, Vec<String>)> {
    let mut used_tables: BTreeSet<String> =
        view.columns.iter().filter(|c| used.contains(&c.alias)).map(|c| c.table.to_ascii_lowercase()).collect();
    // `--view-columns all-once`: a column left out is read through the one
    // that stands for it, and a table all of whose columns were left out
    // (a subtype joined only by its key) cannot be named but still filters.
    for m in &view.merged {
        let shows_none = !view.columns.iter().any(|c| c.table.eq_ignore_ascii_case(&m.table));
        if used.contains(&m.same_as) || shows_none {
            used_tables.insert(m.table.to_ascii_lowercase());
        }
    }
    let needed = |t: TableId| {
        let name = graph.name(t).to_ascii_lowercase();
        used_tables.contains(&name) || keep.is_some_and(|k| k.eq_ignore_ascii_case(&name)) || named.contains(&t)
    };
    let mut kept: Vec<TableId> = found.tables.iter().copied().filter(|&t| needed(t)).collect();
    if kept.len() == found.tables.len() {
        return None;
    }
    // A table the solver joined to connect others, whose columns the SQL
    // reads, becomes relevant: the narrower view must still hold it.
    for name in &used_tables {
        if let Some(t) = graph.table_id(name) {
            if graph.name(t).eq_ignore_ascii_case(name) && !kept.contains(&t) {
                kept.push(t);
            }
        }
    }
    if kept.is_empty() && found.roles.is_empty() {
        return None;
    }
    let dropped: Vec<String> =
        found.tables.iter().filter(|&&t| !needed(t)).map(|&t| graph.name(t).to_string()).collect();
    let columns = found.columns.iter().copied().filter(|&c| kept.contains(&c.table)).collect();
    Some((Relevance { tables: kept, columns, roles: found.roles.clone() }, dropped))
}

/// What [`narrow`] did.
pub type Narrowed = super::rerun::Reran<NarrowTrace>;

/// Solve for the narrower relevance and run `sql` (QueryView's `written`
/// query after lucy's rewrites) over its view; the new view and rows when
/// every used column is still there and the SQL runs.
#[allow(clippy::too_many_arguments)]
pub fn narrow(
    graph: &SchemaGraph,
    found: &Relevance,
    request: &ViewRequest,
    view: &ViewResult,
    sql: &str,
    written: &str,
    named: &[TableId],
    db: &crate::sql::exec::Database,
    exec: &ExecOptions,
) -> Narrowed {
    let Some(used) = used_columns(sql, written, view) else { return Narrowed::NotTried };
    let Some((rel, dropped)) = narrower(graph, found, view, &used, request.keep.as_deref(), named) else {
        return Narrowed::NotTried;
    };
    let (tables, attributes) = super::relevance_names(graph, &rel);
    let req = ViewRequest { tables, attributes, ..request.clone() };
    let run = super::rerun::solve_and_run(graph, req, &used, sql, "narrower", db, exec);
    Narrowed::from_run(run, |rerun| NarrowTrace { dropped, rerun })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::exec::Database;
    use crate::sql::exec::{run, ViewDef};
    use crate::types::ViewColumns;

    use crate::graph::fixtures::ddo;

    fn request(tables: &[&str]) -> ViewRequest {
        ViewRequest { columns: ViewColumns::All, ..ViewRequest::new(tables.iter().map(|t| t.to_string()).collect()) }
    }

    fn relevance(g: &SchemaGraph, tables: &[&str]) -> Relevance {
        let mut r = Relevance::default();
        for t in tables {
            r.add_table(g.table_id(t).unwrap());
        }
        r
    }

    #[test]
    fn a_star_is_left_alone_and_names_are_matched_whole() {
        let g = ddo();
        let req = request(&["CLIENT", "DATACENTER"]);
        let v = crate::solve::generate(&g, &relevance(&g, &["CLIENT", "DATACENTER"]), &req.options()).unwrap();
        let s = "SELECT * FROM lucy_view";
        assert!(used_columns(s, s, &v).is_none());
        let s = "SELECT v.* FROM lucy_view v";
        assert!(used_columns(s, s, &v).is_none());
        let s = "SELECT \"CLIENT_name\", COUNT(*) FROM lucy_view GROUP BY 1";
        let used = used_columns(s, s, &v).unwrap();
        assert_eq!(used.into_iter().collect::<Vec<_>>(), vec!["CLIENT_name"]);
    }

    #[test]
    fn an_unread_relevant_table_is_dropped_and_its_rows_come_back() {
        let g = ddo();
        let tables = ["CLIENT", "DATACENTER", "PAYMENT"];
        let found = relevance(&g, &tables);
        let req = request(&tables);
        let v = crate::solve::generate(&g, &found, &req.options()).unwrap();
        let sql = "SELECT DISTINCT CLIENT_name, DATACENTER_name FROM lucy_view";
        let db = Database::Sqlite(concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.sqlite").into());
        let exec = ExecOptions { limit: None, timeout: std::time::Duration::from_secs(10), max_result_bytes: 1 << 24 };
        let before = run(&db, Some(ViewDef::from(v.body.as_ref().unwrap())), sql, &exec).unwrap();
        let Narrowed::Used(nv, rows, nt) = narrow(&g, &found, &req, &v, sql, sql, &[], &db, &exec) else {
            panic!("not used")
        };
        assert_eq!(nt.dropped, vec!["PAYMENT"]);
        assert!(!nv.tables.iter().any(|t| t == "PAYMENT"), "{:?}", nv.tables);
        assert!(rows.rows.len() >= before.rows.len());
        assert_eq!(nt.rerun.rows, Some(rows.rows.len()));
        // A connecting table whose column the SQL reads stays (CLIENT here,
        // between DATACENTER and PAYMENT).
        let pd = ["DATACENTER", "PAYMENT"];
        let found2 = relevance(&g, &pd);
        let v2 = crate::solve::generate(&g, &found2, &request(&pd).options()).unwrap();
        assert!(v2.tables.iter().any(|t| t == "CLIENT"), "{:?}", v2.tables);
        let s2 = "SELECT CLIENT_name, COUNT(*) FROM lucy_view GROUP BY CLIENT_name";
        let Narrowed::Used(nv2, _, nt2) = narrow(&g, &found2, &request(&pd), &v2, s2, s2, &[], &db, &exec) else {
            panic!("not used")
        };
        assert_eq!(nt2.dropped, vec!["DATACENTER", "PAYMENT"]);
        assert_eq!(nv2.tables, vec!["CLIENT"]);
        // The table `keep` names stays; nothing else to drop: not tried.
        let req = ViewRequest { keep: Some("PAYMENT".into()), ..req };
        assert!(matches!(narrow(&g, &found, &req, &v, sql, sql, &[], &db, &exec), Narrowed::NotTried));
        // So does a table the question names (`--narrow-view unnamed`).
        let req = ViewRequest { keep: None, ..req };
        let payment = [g.table_id("PAYMENT").unwrap()];
        assert!(matches!(narrow(&g, &found, &req, &v, sql, sql, &payment, &db, &exec), Narrowed::NotTried));
        // Every relevant table read: not tried.
        let sql = "SELECT CLIENT_name, DATACENTER_name, PAYMENT_date FROM lucy_view";
        assert!(matches!(narrow(&g, &found, &request(&tables), &v, sql, sql, &[], &db, &exec), Narrowed::NotTried));
    }

    #[test]
    fn the_mode_says_when_and_reads_old_booleans() {
        let rows = |n: usize| QueryRows {
            columns: vec!["x".into()],
            rows: vec![vec![crate::sql::exec::SqlValue::Integer(0)]; n],
            ..QueryRows::default()
        };
        assert!(!NarrowView::Off.applies(&rows(0)));
        assert!(NarrowView::Empty.applies(&rows(0)));
        assert!(!NarrowView::Empty.applies(&rows(1)), "a row of 0 is an answer");
        assert!(NarrowView::On.applies(&rows(1)));
        assert!(NarrowView::Unnamed.applies(&rows(1)));
        let read = |j: &str| serde_json::from_str::<NarrowView>(j);
        assert_eq!(read("true").unwrap(), NarrowView::On);
        assert_eq!(read("false").unwrap(), NarrowView::Off);
        assert_eq!(read("\"empty\"").unwrap(), NarrowView::Empty);
        assert_eq!(read("\"ON\"").unwrap(), NarrowView::On);
        let e = read("\"sometimes\"").unwrap_err().to_string();
        assert_eq!(read("\"unnamed\"").unwrap(), NarrowView::Unnamed);
        assert!(e.contains("expected \"off\", \"empty\", \"on\" or \"unnamed\""), "{e}");
        assert_eq!(serde_json::to_string(&NarrowView::Empty).unwrap(), "\"empty\"");
    }
}
