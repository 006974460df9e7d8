//! `--lookup-filters named|off` (issue 23): after QueryView's SQL runs, a
//! lookup row the question names filters the view, and the same SQL runs
//! again. No LLM call.
//!
//! A code table such as ACME's `Party_Role` (`AG` Agent, `PH`
//! PolicyHolder, `UW` Underwriter) says what kind of row another table
//! holds: "the policies that agents have sold" are the
//! `Agreement_Party_Role` rows with `Party_Role_Code = 'AG'`. The 1.5B
//! model rarely writes that filter, though the column's description says
//! it; the question's own words name the row (issue 23's value index:
//! "agent" finds `Party_Role_Name = 'Agent'` → code `'AG'`).
//!
//! For each lookup table of the model (the `lookup` patterns) that exactly
//! one view instance references by a one-column relationship, lucy reads
//! the lookup's rows (at most [`MAX_ROWS`]; a larger table is not a code
//! table) and the phrases of their text values. When the question holds
//! such a phrase word for word (stemmed) and every row it names shares that
//! one phrase (one value, or several rows with the same value: "the USA"),
//! the view keeps only the rows whose foreign key is one of those rows'
//! keys (`ViewRequest::filters`). Nothing happens when the SQL already
//! reads the foreign key or a column of the lookup (it filters, or lists,
//! the kinds itself), when two phrases of one lookup are named (an agent
//! *and* a policy holder: two roles, not one filter), or when the question
//! negates. When the filtered view lacks a column or the SQL fails on it,
//! the first answer stands. The trace's `lookup_filters` section says what
//! happened.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::graph::{SchemaGraph, TableId};
use crate::link::named::{holds, spelling};
use crate::link::retrieve::tokens;
use crate::sql::exec::{run, Database, ExecOptions, QueryRows, SqlValue};
use crate::types::trace::LookupFilterTrace;
use crate::types::{ColumnRef, ViewFilter, ViewRequest, ViewResult};

/// `lucy ask`'s and `lucy bench`'s `--lookup-filters` by default: `named`
/// since session 19. Replaying the committed recordings (no model call)
/// with the other defaults of session 19: ACME's 44 13 → 19 (+6, none
/// lost: four "return agents and the policies they have sold …", "the
/// total loss of each policy that an agent has sold", "how many policies
/// does each policy holder have"; it fired on 15), DDO 16 → 16 and the
/// Spider sample's 100 63 → 63 (it fires on neither: no DDO answer leaves
/// a named `LOCATION` row unread, Spider's models declare no lookups).
pub const DEFAULT: LookupFilters = LookupFilters::Named;

/// Lookup rows read at most; a table with more is not a code table.
pub const MAX_ROWS: usize = 200;

/// A text value longer than this (characters) names no row.
pub const MAX_VALUE_CHARS: usize = 64;

/// When [`filters`] runs (`--lookup-filters`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LookupFilters {
    /// Never.
    Off,
    /// A lookup row the question names filters the view.
    Named,
}

/// One filter [`filters`] found, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub filter: ViewFilter,
    /// `Party_Role.Party_Role_Name 'Agent'`: the lookup value the question named.
    pub because: String,
}

/// The filters the question's words put on `view`: see the module doc.
/// `written` are the view columns the SQL reads as QueryView wrote it
/// (lucy's rewrites add the keys they partition by, a code among them);
/// `db` and `exec` read the lookup tables.
pub fn filters(
    graph: &SchemaGraph,
    view: &ViewResult,
    written: &BTreeSet<String>,
    question: &str,
    db: &Database,
    exec: &ExecOptions,
) -> Vec<Found> {
    if super::branches::negates(question) {
        return Vec::new();
    }
    let q = tokens(question);
    let read = |table: &str, column: Option<&str>| {
        view.columns.iter().any(|c| {
            c.table.eq_ignore_ascii_case(table)
                && column.is_none_or(|col| c.column.eq_ignore_ascii_case(col))
                && written.iter().any(|u| u.eq_ignore_ascii_case(&c.alias))
        })
    };
    let mut out = Vec::new();
    for &l in graph.lookup_tables() {
        // The one view instance that references `l` by one column.
        let refs: Vec<(TableId, String, String)> = view
            .instances
            .iter()
            .filter(|i| i.table != l)
            .flat_map(|i| {
                graph.relationships_between(i.table, l).into_iter().filter_map(move |rel| {
                    let (from, to) = graph.endpoints(rel);
                    let r = graph.relationship(rel);
                    match r.on.as_slice() {
                        [[fk, key]] if from == i.table && to == l => Some((i.table, fk.clone(), key.clone())),
                        _ => None,
                    }
                })
            })
            .collect();
        let [(t, fk, key)] = refs.as_slice() else { continue };
        let lname = graph.name(l);
        if read(graph.name(*t), Some(fk)) || read(lname, None) {
            continue;
        }
        let Some(rows) = lookup_rows(graph, l, key, db, exec) else { continue };
        // The phrases the question holds, and the keys of the rows holding each.
        let mut named: Vec<(Vec<String>, String, Vec<SqlValue>)> = Vec::new();
        for (k, texts) in rows {
            for (col, text) in texts {
                let Some(phrase) = spelling(&text) else { continue };
                if !holds(&q, &phrase) {
                    continue;
                }
                match named.iter_mut().find(|(p, _, _)| *p == phrase) {
                    Some((_, _, keys)) if !keys.contains(&k) => keys.push(k.clone()),
                    Some(_) => {}
                    None => named.push((phrase, format!("{lname}.{col} '{text}'"), vec![k.clone()])),
                }
            }
        }
        // One phrase inside another ("policy holder" in "policy holder
        // agent") is the same mention.
        let outer: Vec<&(Vec<String>, String, Vec<SqlValue>)> =
            named.iter().filter(|(p, _, _)| !named.iter().any(|(o, _, _)| o.len() > p.len() && holds(o, p))).collect();
        let [(_, because, keys)] = outer.as_slice() else { continue };
        let values: Option<Vec<serde_json::Value>> = keys.iter().map(json_value).collect();
        let Some(values) = values else { continue };
        out.push(Found {
            filter: ViewFilter { column: ColumnRef::new(graph.name(*t), fk.clone()), values },
            because: because.clone(),
        });
    }
    out
}

/// A lookup row's key as JSON (a string or a number); `None` otherwise.
fn json_value(v: &SqlValue) -> Option<serde_json::Value> {
    match v {
        SqlValue::Integer(i) => Some((*i).into()),
        SqlValue::Text(s) => Some(s.clone().into()),
        SqlValue::Real(f) => serde_json::Number::from_f64(*f).map(serde_json::Value::Number),
        SqlValue::Null | SqlValue::Blob(_) => None,
    }
}

/// Each row of lookup `l`: its `key` value and its short text values with
/// their column names; `None` when the table has more than [`MAX_ROWS`]
/// rows or cannot be read.
#[allow(clippy::type_complexity)]
fn lookup_rows(
    graph: &SchemaGraph,
    l: TableId,
    key: &str,
    db: &Database,
    exec: &ExecOptions,
) -> Option<Vec<(SqlValue, Vec<(String, String)>)>> {
    let d = db.dialect();
    let table = graph.table(l);
    let cols: Vec<&str> = std::iter::once(key)
        .chain(table.columns.iter().map(|c| c.name.as_str()).filter(|c| !c.eq_ignore_ascii_case(key)))
        .collect();
    let sql = format!(
        "SELECT {} FROM {}",
        cols.iter().map(|c| crate::view::sql::quote_name(c, d)).collect::<Vec<_>>().join(", "),
        crate::view::sql::quote_table(table, d)
    );
    let opts = ExecOptions { limit: Some(MAX_ROWS + 1), ..exec.clone() };
    let QueryRows { rows, truncated, .. } = run(db, None, &sql, &opts).ok()?;
    if truncated || rows.len() > MAX_ROWS {
        return None;
    }
    Some(
        rows.into_iter()
            .filter_map(|row| {
                let mut it = row.into_iter();
                let k = it.next()?;
                let texts = cols[1..]
                    .iter()
                    .zip(it)
                    .filter_map(|(c, v)| match v {
                        SqlValue::Text(s) if !s.trim().is_empty() && s.chars().count() <= MAX_VALUE_CHARS => {
                            Some((c.to_string(), s))
                        }
                        _ => None,
                    })
                    .collect();
                Some((k, texts))
            })
            .collect(),
    )
}

/// What [`apply`] did.
pub type Applied = super::rerun::Reran<LookupFilterTrace>;

/// Solve `request` again with `found`'s filters and run `sql` over the
/// filtered view; the view and rows when every used column is still there
/// and the SQL runs.
#[allow(clippy::too_many_arguments)]
pub fn apply(
    graph: &SchemaGraph,
    request: &ViewRequest,
    found: &[Found],
    used: &BTreeSet<String>,
    sql: &str,
    db: &Database,
    exec: &ExecOptions,
) -> Applied {
    let mut filters = request.filters.clone();
    filters.extend(found.iter().map(|f| f.filter.clone()));
    let req = ViewRequest { filters, ..request.clone() };
    let run = super::rerun::solve_and_run(graph, req, used, sql, "filtered", db, exec);
    Applied::from_run(run, |rerun| LookupFilterTrace {
        filters: found.iter().map(|f| f.filter.clone()).collect(),
        because: found.iter().map(|f| f.because.clone()).collect(),
        rerun,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::fixtures::ddo;
    use crate::pipeline::narrow::used_columns;
    use crate::types::ViewColumns;

    const DB: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.sqlite");

    fn db() -> Database {
        Database::Sqlite(DB.into())
    }

    fn exec() -> ExecOptions {
        ExecOptions { limit: None, timeout: std::time::Duration::from_secs(10), max_result_bytes: 1 << 24 }
    }

    fn request(tables: &[&str]) -> ViewRequest {
        ViewRequest { columns: ViewColumns::All, ..ViewRequest::new(tables.iter().map(|t| t.to_string()).collect()) }
    }

    fn found(g: &SchemaGraph, tables: &[&str], question: &str, sql: &str) -> Vec<Found> {
        let v = crate::solve::generate_view(g, &request(tables)).unwrap();
        let read = used_columns(sql, sql, &v).unwrap();
        filters(g, &v, &read, question, &db(), &exec())
    }

    #[test]
    fn a_lookup_row_the_question_names_filters_the_table_that_references_it() {
        let g = ddo();
        let sql = "SELECT CLIENT_name FROM lucy_view";
        let f = found(&g, &["CLIENT"], "Which clients are located in Madrid?", sql);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].filter.column, ColumnRef::new("CLIENT", "loc_id"));
        assert_eq!(f[0].filter.values, [serde_json::json!(8)]);
        assert_eq!(f[0].because, "LOCATION.city 'Madrid'");
        // One value naming several rows: every one of them.
        let dc = "SELECT DATACENTER_name FROM lucy_view";
        let f = found(&g, &["DATACENTER"], "Which datacenters are in the USA?", dc);
        assert_eq!(f.len(), 1, "{f:?}");
        let usa: Vec<i64> = f[0].filter.values.iter().map(|v| v.as_i64().unwrap()).collect();
        assert_eq!(usa, [1, 5, 11]);
    }

    #[test]
    fn no_filter_where_the_sql_or_the_question_already_says_which_rows() {
        let g = ddo();
        let q = "Which clients are located in Madrid?";
        // The SQL reads the key, or the lookup's own columns.
        assert!(found(&g, &["CLIENT"], q, "SELECT CLIENT_name FROM lucy_view WHERE CLIENT_loc_id = 8").is_empty());
        let with_city = "SELECT CLIENT_name FROM lucy_view WHERE LOCATION_city = 'Madrid'";
        assert!(found(&g, &["CLIENT", "LOCATION"], q, with_city).is_empty());
        // Two rows named by two phrases; a negation; nothing named.
        let sql = "SELECT CLIENT_name FROM lucy_view";
        assert!(found(&g, &["CLIENT"], "Which clients are in Madrid or Boston?", sql).is_empty());
        assert!(found(&g, &["CLIENT"], "Which clients are not in Madrid?", sql).is_empty());
        assert!(found(&g, &["CLIENT"], "Which clients are there?", sql).is_empty());
    }

    #[test]
    fn the_same_sql_over_the_filtered_view_gives_the_named_rows() {
        let g = ddo();
        let sql = "SELECT CLIENT_name FROM lucy_view";
        let req = request(&["CLIENT"]);
        let v = crate::solve::generate_view(&g, &req).unwrap();
        let used = used_columns(sql, sql, &v).unwrap();
        let f = filters(&g, &v, &used, "Which clients are located in Madrid?", &db(), &exec());
        let Applied::Used(fv, rows, lt) = apply(&g, &req, &f, &used, sql, &db(), &exec()) else { panic!("not used") };
        assert!(fv.view_sql.contains("WHERE CLIENT.loc_id = 8"), "{}", fv.view_sql);
        assert_eq!(lt.rerun.view.as_ref().unwrap().request.filters, [f[0].filter.clone()]);
        let gold = crate::sql::exec::run(
            &db(),
            None,
            "SELECT c.name FROM CLIENT c JOIN LOCATION l ON l.id = c.loc_id WHERE l.city = 'Madrid'",
            &exec(),
        )
        .unwrap();
        assert_eq!(rows.rows.len(), gold.rows.len());
        assert_eq!(lt.rerun.rows, Some(gold.rows.len()));
        // A filter on a table the view does not join: a clear error.
        let bad = ViewRequest {
            filters: vec![ViewFilter { column: ColumnRef::new("PAYMENT", "client_id"), values: vec![1.into()] }],
            ..req.clone()
        };
        let e = crate::solve::generate_view(&g, &bad).unwrap_err().to_string();
        assert!(e.contains("filter PAYMENT.client_id") && e.contains("does not join PAYMENT"), "{e}");
        let bad = ViewRequest {
            filters: vec![ViewFilter { column: ColumnRef::new("CLIENT", "loc_id"), values: vec![] }],
            ..req
        };
        let e = crate::solve::generate_view(&g, &bad).unwrap_err().to_string();
        assert!(e.contains("CLIENT.loc_id") && e.contains("strings or numbers"), "{e}");
    }
}
