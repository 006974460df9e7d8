//! Example pools for benchmarks (`lucy bench --examples POOL`): JSON Lines
//! of `{"question", "sql", "database", "kind"}`, and the two kinds that do
//! not leak a suite's answers.
//!
//! - `cross-database`: questions of *other* databases of the same suite
//!   (Spider dev: the other 19 databases). A question never sees its own
//!   database's entries — Spider dev holds paraphrase twins with identical
//!   gold SQL (ids 583/584) — nor any entry whose question or SQL equals
//!   (normalised) its own question or gold SQL (databases that share a
//!   table, e.g. `singer`, repeat queries).
//! - `in-database`: built from the database's schema and values only, the
//!   dynamic few-shot vector search recipe (DynVS thesis §3: one templated
//!   (question, SQL) pair per distinct value of each text column), never
//!   from a suite's questions or gold SQL.
//!
//! [`leaks`] is the check the tests run: pool entries equal to a suite
//! question or gold SQL, per question after [`Pool::candidates`].

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::file::{normalize_text, Example, ExamplesFile};
use crate::error::{Error, Result};
use crate::graph::SchemaGraph;
use crate::sql::exec::{run, Database, ExecOptions, DEFAULT_MAX_RESULT_BYTES};
use crate::types::value::SqlValue;

/// Which kind of pool; every benchmark result names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PoolKind {
    /// Other databases' questions and gold SQL.
    CrossDatabase,
    /// Templated from the question's own database's schema and values.
    InDatabase,
}

impl PoolKind {
    /// The label in files and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            PoolKind::CrossDatabase => "cross-database",
            PoolKind::InDatabase => "in-database",
        }
    }

    fn parse(s: &str) -> Option<PoolKind> {
        match s {
            "cross-database" => Some(PoolKind::CrossDatabase),
            "in-database" => Some(PoolKind::InDatabase),
            _ => None,
        }
    }
}

/// A loaded pool.
#[derive(Debug, Clone, PartialEq)]
pub struct Pool {
    pub kind: PoolKind,
    pub entries: Vec<Example>,
}

/// The first line of a pool file: `{"pool": KIND}`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Header {
    pool: String,
}

impl Pool {
    /// Read a pool: a `{"pool": "cross-database"|"in-database"}` header line,
    /// then examples that each name their `database`.
    pub fn load(path: &Path) -> Result<Pool> {
        let text = crate::error::read_to_string(path)?;
        let (first, rest) = text.split_once('\n').unwrap_or((&text, ""));
        let at = |n: usize, m: String| Error::Input(format!("{}:{n}: {m}", path.display()));
        let header: Header = serde_json::from_str(first).map_err(|e| {
            at(1, format!("a pool starts with {{\"pool\": \"cross-database\" | \"in-database\"}}: {e}"))
        })?;
        let kind = PoolKind::parse(&header.pool)
            .ok_or_else(|| at(1, format!("unknown pool kind `{}`: cross-database or in-database", header.pool)))?;
        let file = ExamplesFile::parse(path, &format!("\n{rest}"))?;
        let mut entries = Vec::new();
        for e in file.entries {
            if e.example.database.as_deref().is_none_or(str::is_empty) {
                return Err(at(e.line, "a pool entry needs its `database`".into()));
            }
            entries.push(e.example);
        }
        Ok(Pool { kind, entries })
    }

    /// Write the pool (header line, then one example per line).
    pub fn save(&self, path: &Path) -> Result<()> {
        let mut text = serde_json::to_string(&Header { pool: self.kind.as_str().into() }).unwrap_or_default();
        text.push('\n');
        for e in &self.entries {
            text.push_str(&serde_json::to_string(e).map_err(|e| Error::Input(e.to_string()))?);
            text.push('\n');
        }
        std::fs::write(path, text).map_err(|e| Error::io(path, e))
    }

    /// The entries a question may see: for `cross-database`, those of other
    /// databases; for `in-database`, those of its own; in both, none whose
    /// question or SQL equals (normalised) the question or its gold SQL.
    pub fn candidates<'p>(&'p self, database: &str, question: &str, gold_sql: &str) -> Vec<&'p Example> {
        self.candidate_indices(database, question, gold_sql).into_iter().map(|i| &self.entries[i]).collect()
    }

    /// [`Pool::candidates`] as indices into `entries`.
    pub fn candidate_indices(&self, database: &str, question: &str, gold_sql: &str) -> Vec<usize> {
        let q = normalize_text(question);
        let g = normalize_sql(gold_sql);
        self.entries
            .iter()
            .enumerate()
            .filter(|(_, e)| {
                let same_db = e.database.as_deref() == Some(database);
                match self.kind {
                    PoolKind::CrossDatabase => !same_db,
                    PoolKind::InDatabase => same_db,
                }
            })
            .filter(|(_, e)| normalize_text(&e.question) != q && normalize_sql(&e.sql) != g)
            .map(|(i, _)| i)
            .collect()
    }
}

/// SQL compared without case, runs of spaces, spaces around punctuation or
/// a trailing `;`.
pub fn normalize_sql(s: &str) -> String {
    let t = normalize_text(s);
    let mut out = String::with_capacity(t.len());
    let chars: Vec<char> = t.chars().collect();
    for (i, c) in chars.iter().enumerate() {
        if *c == ' ' {
            let prev = i.checked_sub(1).map(|j| chars[j]);
            let next = chars.get(i + 1).copied();
            let punct = |x: Option<char>| x.is_some_and(|x| "(),=<>".contains(x));
            if punct(prev) || punct(next) {
                continue;
            }
        }
        out.push(*c);
    }
    out
}

/// A suite question as the leakage check sees it.
#[derive(Debug, Clone)]
pub struct SuiteItem {
    pub id: String,
    pub database: String,
    pub question: String,
    pub gold_sql: String,
}

/// Every (question id, pool entry question) where an entry the question may
/// see ([`Pool::candidates`]) leaks: for a cross-database pool, an entry of
/// the question's own database or equal (normalised) to its question or gold
/// SQL; for an in-database pool, an entry equal to *any* question or gold
/// SQL of the suite (it must come from schema and values alone). Empty: the
/// pool does not leak on this suite.
pub fn leaks(pool: &Pool, suite: &[SuiteItem]) -> Vec<(String, String)> {
    let questions: BTreeSet<String> = suite.iter().map(|s| normalize_text(&s.question)).collect();
    let golds: BTreeSet<String> = suite.iter().map(|s| normalize_sql(&s.gold_sql)).collect();
    let mut out = Vec::new();
    for s in suite {
        let (q, g) = (normalize_text(&s.question), normalize_sql(&s.gold_sql));
        for e in pool.candidates(&s.database, &s.question, &s.gold_sql) {
            let (eq, eg) = (normalize_text(&e.question), normalize_sql(&e.sql));
            let leak = match pool.kind {
                PoolKind::CrossDatabase => e.database.as_deref() == Some(s.database.as_str()) || eq == q || eg == g,
                PoolKind::InDatabase => questions.contains(&eq) || golds.contains(&eg),
            };
            if leak {
                out.push((s.id.clone(), e.question.clone()));
            }
        }
    }
    out
}

/// A cross-database pool from a suite's questions (each with its database).
/// Which entries a question may see is decided per question
/// ([`Pool::candidates`]).
pub fn cross_database(suite: &[SuiteItem]) -> Pool {
    Pool {
        kind: PoolKind::CrossDatabase,
        entries: suite
            .iter()
            .map(|s| Example {
                question: s.question.clone(),
                sql: s.gold_sql.clone(),
                database: Some(s.database.clone()),
            })
            .collect(),
    }
}

/// DynVS's recipe on one database: for each table and each text column, one
/// pair per distinct value (at most `per_column`, most frequent first, ties
/// by value): "TABLE with COLUMN VALUE" and `SELECT <the table's other
/// columns> FROM TABLE WHERE COLUMN = 'VALUE'`. Reads only the schema and
/// the values.
pub fn in_database(graph: &SchemaGraph, db: &Database, database: &str, per_column: usize) -> Result<Vec<Example>> {
    let opts = ExecOptions {
        limit: Some(per_column),
        timeout: Duration::from_secs(30),
        max_result_bytes: DEFAULT_MAX_RESULT_BYTES,
    };
    let q = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
    let mut out = Vec::new();
    for t in &graph.model().tables {
        for c in &t.columns {
            let ty = c.sql_type.to_ascii_lowercase();
            if !(ty.contains("char") || ty.contains("text") || ty.contains("string") || ty.is_empty()) {
                continue;
            }
            let sql = format!(
                "SELECT {col} FROM {tab} WHERE {col} IS NOT NULL AND {col} <> '' GROUP BY {col} ORDER BY COUNT(*) DESC, {col}",
                col = q(&c.name),
                tab = crate::view::sql::quote_table(t, db.dialect())
            );
            let rows = run(db, None, &sql, &opts).map_err(|e| {
                Error::Input(format!("{database}: cannot read the values of {}.{}: {e}", t.name, c.name))
            })?;
            let others: Vec<String> = t.columns.iter().filter(|o| o.name != c.name).map(|o| q(&o.name)).collect();
            let select = if others.is_empty() { q(&c.name) } else { others.join(", ") };
            for r in rows.rows {
                let Some(SqlValue::Text(v)) = r.into_iter().next() else { continue };
                if v.len() > 80 || v.contains('\n') {
                    continue;
                }
                out.push(Example {
                    question: format!("{} with {} {v}", t.name.replace('_', " "), c.name.replace('_', " ")),
                    sql: format!(
                        "SELECT {select} FROM {} WHERE {} = '{}'",
                        q(&t.name),
                        q(&c.name),
                        v.replace('\'', "''")
                    ),
                    database: Some(database.to_string()),
                });
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(id: &str, db: &str, q: &str, sql: &str) -> SuiteItem {
        SuiteItem { id: id.into(), database: db.into(), question: q.into(), gold_sql: sql.into() }
    }

    #[test]
    fn cross_database_candidates_skip_the_own_database_and_twins() {
        let suite = vec![
            item("583", "a", "How many singers are there?", "SELECT count(*) FROM singer"),
            item("584", "a", "What is the number of singers?", "SELECT count(*) FROM singer"),
            item("900", "b", "How many singers do we have?", "select count(*) from singer;"),
            item("901", "b", "List the names of songs.", "SELECT name FROM song"),
        ];
        let pool = cross_database(&suite);
        let c: Vec<&str> =
            pool.candidates("a", &suite[0].question, &suite[0].gold_sql).iter().map(|e| e.question.as_str()).collect();
        // Own database out; b's query with the same SQL (normalised) out.
        assert_eq!(c, vec!["List the names of songs."]);
        assert!(leaks(&pool, &suite).is_empty());
        // A pool that ignored the rule would be caught.
        let raw = Pool { kind: PoolKind::InDatabase, entries: pool.entries.clone() };
        assert!(!leaks(&raw, &suite).is_empty());
    }

    #[test]
    fn normalize_sql_ignores_case_spacing_and_semicolon() {
        assert_eq!(normalize_sql("SELECT count( * )  FROM t ;"), normalize_sql("select count(*) from t"));
        assert_ne!(normalize_sql("SELECT a FROM t"), normalize_sql("SELECT b FROM t"));
    }
}
