//! Gold results engine by engine (`lucy bench --database URL`): each gold
//! query (written for SQLite) runs on the server as is, and after its
//! names are ported to the server's spelling and quoting; the rows are
//! compared with the same query on the suite's SQLite file (ex's rules:
//! numbers within tolerance, order only when the gold orders).

use serde::{Deserialize, Serialize};

use super::metrics::{ex, Cell, Rows};
use super::suite::{Question, Suite};
use crate::graph::SchemaGraph;
use crate::sql::exec::{run, Database, ExecOptions, QueryRows, SqlValue};
use crate::sql::port::{port_sql, Names};

/// One gold query on a server, next to SQLite.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EngineGold {
    /// The engine (`postgres`, `mysql`).
    pub engine: String,
    /// The gold SQL ran unchanged.
    pub as_is: bool,
    /// The gold SQL ran after name porting (what ex uses on this engine).
    pub ported: bool,
    /// Its rows equal SQLite's (None: one side did not run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub same_rows: Option<bool>,
    /// Why it did not run, or how the rows differ.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The gold SQL (written for SQLite) as it runs on `db`: on a server, with
/// the model's names in catalog spelling and quoting ([`port_sql`]).
pub fn gold_for(q: &Question, db: &Database, graph: &SchemaGraph) -> String {
    match db {
        Database::Sqlite(_) => q.gold_sql.clone(),
        _ => port_sql(&q.gold_sql, db.dialect(), &Names::of(graph.model()))
            .map(|p| p.0)
            .unwrap_or_else(|_| q.gold_sql.clone()),
    }
}

/// Convert an execution result to metric rows.
pub fn to_rows(r: &QueryRows) -> Rows {
    r.rows
        .iter()
        .map(|row| {
            row.iter()
                .map(|v| match v {
                    SqlValue::Null => Cell::Null,
                    SqlValue::Integer(i) => Cell::Int(*i),
                    SqlValue::Real(f) => Cell::Real(*f),
                    SqlValue::Text(s) => Cell::Text(s.clone()),
                    SqlValue::Blob(b) => Cell::Text(b.iter().map(|x| format!("{x:02x}")).collect()),
                })
                .collect()
        })
        .collect()
}

/// Bounds of the benchmark's own executions (gold SQL, probes, predictions).
pub(crate) fn exec_opts() -> ExecOptions {
    ExecOptions { limit: Some(100_000), timeout: std::time::Duration::from_secs(30), max_result_bytes: 64 << 20 }
}

/// Run `q`'s gold on `db` (a server) and on the suite's SQLite file.
pub fn compare(suite: &Suite, q: &Question, graph: &SchemaGraph, db: &Database, ordered: bool) -> EngineGold {
    let mut g = EngineGold { engine: db.dialect().as_str().to_string(), ..EngineGold::default() };
    g.as_is = run(db, None, &q.gold_sql, &exec_opts()).is_ok();
    let server = run(db, None, &gold_for(q, db, graph), &exec_opts());
    g.ported = server.is_ok();
    let sqlite =
        suite.database_path(q).ok().flatten().map(|p| run(&Database::Sqlite(p), None, &q.gold_sql, &exec_opts()));
    match (server, sqlite) {
        (Ok(s), Some(Ok(l))) => {
            let same = ex(&to_rows(&l), &to_rows(&s), ordered);
            g.same_rows = Some(same);
            if !same {
                g.error = Some(format!(
                    "{} rows on SQLite, {} on {}; first differing: {}",
                    l.rows.len(),
                    s.rows.len(),
                    g.engine,
                    first_diff(&l.rows, &s.rows)
                ));
            }
        }
        (Err(e), _) => g.error = Some(e.to_string()),
        (Ok(_), Some(Err(e))) => g.error = Some(format!("the gold does not run on SQLite: {e}")),
        (Ok(_), None) => g.error = Some("the suite has no SQLite database to compare with".into()),
    }
    g
}

fn first_diff(a: &[Vec<SqlValue>], b: &[Vec<SqlValue>]) -> String {
    let show = |r: Option<&Vec<SqlValue>>| match r {
        Some(r) => format!(
            "({})",
            r.iter().map(|v| v.to_string().chars().take(40).collect::<String>()).collect::<Vec<_>>().join(", ")
        ),
        None => "(none)".into(),
    };
    let i = a.iter().zip(b).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
    format!("row {}: {} vs {}", i + 1, show(a.get(i)), show(b.get(i)))
}

/// The engine table of a run (question id, comparison): counts, then every
/// query that differs.
pub fn render(gs: &[(&str, &EngineGold)]) -> String {
    let Some((_, first)) = gs.first() else { return String::new() };
    let n = gs.len();
    let count = |f: &dyn Fn(&EngineGold) -> bool| gs.iter().filter(|(_, g)| f(g)).count();
    let mut s = format!(
        "\n## Gold SQL on {} vs SQLite\n\n| gold queries | run as is | run after name porting | same rows as SQLite | differ | not run |\n|---:|---:|---:|---:|---:|---:|\n| {n} | {} | {} | {} | {} | {} |\n",
        first.engine,
        count(&|g| g.as_is),
        count(&|g| g.ported),
        count(&|g| g.same_rows == Some(true)),
        count(&|g| g.same_rows == Some(false)),
        count(&|g| !g.ported),
    );
    let odd: Vec<_> = gs.iter().filter(|(_, g)| g.same_rows != Some(true)).collect();
    if !odd.is_empty() {
        s.push_str("\n| question | why |\n|---|---|\n");
        for (r, g) in odd {
            let why = g.error.clone().unwrap_or_default().replace('|', "\\|").replace('\n', " ");
            s.push_str(&format!("| {r} | {} |\n", why.chars().take(240).collect::<String>()));
        }
    }
    s
}
