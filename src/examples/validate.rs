//! An example's SQL checked against the model with `lucy check`'s rules
//! (names, declared joins, C3, C4, forbidden tables, fan-out) and, when a
//! database is given, run read-only: what `lucy examples add|check` report,
//! so a schema change that breaks a verified query is caught.

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::file::{Entry, ExamplesFile};
use crate::check::{check_sql, Finding, FindingKind};
use crate::error::{Error, Result};
use crate::graph::SchemaGraph;
use crate::sql::exec::{run, Database, ExecOptions, DEFAULT_MAX_RESULT_BYTES};
use crate::types::Dialect;

/// What checking one example found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ExampleCheck {
    /// 1-based line in the file (0 for an example not yet in a file).
    pub line: usize,
    pub question: String,
    pub sql: String,
    /// No parse error, no finding, and (when run) no execution error.
    pub ok: bool,
    /// The model tables the SQL reads.
    pub tables: Vec<String>,
    /// The SQL is not one parseable SELECT.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parse_error: Option<String>,
    /// `lucy check`'s findings.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<Finding>,
    /// When run: rows read (`Some`) …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<usize>,
    /// … or the database's error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exec_error: Option<String>,
}

impl ExampleCheck {
    /// One line per problem, `FILE:LINE: …`, for messages.
    pub fn problems(&self, file: &Path) -> Vec<String> {
        self.problems_at(&format!("{}:{}", file.display(), self.line))
    }

    /// One line per problem, each starting with `at`.
    pub fn problems_at(&self, at: &str) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(e) = &self.parse_error {
            out.push(format!("{at}: the SQL does not parse: {e}"));
        }
        for f in &self.findings {
            out.push(format!("{at}: [{}] {}: {}", f.kind.as_str(), f.clause, f.message));
        }
        if let Some(e) = &self.exec_error {
            out.push(format!("{at}: the SQL no longer runs: {e}"));
        }
        out
    }
}

/// Where and how long to run examples.
#[derive(Debug, Clone, Copy)]
pub struct ExecCheck<'a> {
    pub db: &'a Database,
    pub timeout: Duration,
}

/// Check one example: `lucy check` against the model, then (with `exec`)
/// run it read-only, reading at most 1,000 rows.
pub fn check_entry(graph: &SchemaGraph, entry: &Entry, dialect: Dialect, exec: Option<ExecCheck>) -> ExampleCheck {
    let mut out = ExampleCheck {
        line: entry.line,
        question: entry.example.question.clone(),
        sql: entry.example.sql.clone(),
        ok: false,
        tables: Vec::new(),
        parse_error: None,
        findings: Vec::new(),
        rows: None,
        exec_error: None,
    };
    match check_sql(graph, &entry.example.sql, dialect) {
        Ok(r) => {
            out.tables = r.tables;
            out.findings = r.findings;
        }
        Err(e) => out.parse_error = Some(message(&e)),
    }
    if let (Some(x), None) = (exec, &out.parse_error) {
        let opts = ExecOptions { limit: Some(1000), timeout: x.timeout, max_result_bytes: DEFAULT_MAX_RESULT_BYTES };
        match run(x.db, None, entry.example.sql.trim().trim_end_matches(';'), &opts) {
            Ok(rows) => out.rows = Some(rows.rows.len()),
            Err(e) => out.exec_error = Some(message(&e)),
        }
    }
    out.ok = out.parse_error.is_none() && out.findings.is_empty() && out.exec_error.is_none();
    out
}

fn message(e: &Error) -> String {
    match e {
        Error::Sql(m) | Error::Db(m) => m.clone(),
        other => other.to_string(),
    }
}

/// An example ready for retrieval: the entry and the model tables it reads.
#[derive(Debug, Clone, PartialEq)]
pub struct Usable {
    pub entry: Entry,
    pub tables: Vec<String>,
}

/// Read an examples file for `lucy ask`: every line must parse, and every
/// SQL must parse and name only tables and columns the model has (other
/// findings of `lucy check` do not stop an ask; `lucy examples check`
/// reports them). Errors name the file and line and point at `lucy examples
/// check`.
pub fn load_for_model(path: &Path, graph: &SchemaGraph, dialect: Dialect) -> Result<Vec<Usable>> {
    let file = ExamplesFile::load(path)?;
    let mut out = Vec::new();
    for entry in file.entries {
        let c = check_entry(graph, &entry, dialect, None);
        let at = format!("{}:{}", path.display(), entry.line);
        let stale: Vec<String> = match &c.parse_error {
            Some(e) => vec![format!("{at}: the SQL does not parse: {e}")],
            None => c
                .findings
                .iter()
                .filter(|f| matches!(f.kind, FindingKind::UnknownTable | FindingKind::UnknownColumn))
                .map(|f| format!("{at}: [{}] {}: {}", f.kind.as_str(), f.clause, f.message))
                .collect(),
        };
        if !stale.is_empty() {
            return Err(Error::Input(format!(
                "{}\n(the examples file no longer matches the model: fix or remove the line; `lucy examples check` lists every such line)",
                stale.join("\n")
            )));
        }
        out.push(Usable { entry, tables: c.tables });
    }
    Ok(out)
}
