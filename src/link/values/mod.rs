//! The value index (issue 23, items 2 and 5): the distinct short text
//! values of every text-like column of the model, read once per database
//! through the read-only execution targets (`sql::exec`: SQLite,
//! PostgreSQL, MySQL) and cached on disk, so that words and quoted literals
//! of a question can be matched against what the database holds
//! ("agent" → `Party_Role.Party_Role_Name = 'Agent'` and its code `'AG'`;
//! `'dev'` → the `DATACENTER.name` values starting with `dev`).
//!
//! Bounded everywhere ([`ValueBounds`]): at most 1,000 values per column,
//! 64 characters per value, 50,000 values and 4 MiB in all, a time limit per
//! query (a query over the whole column that runs out of time is retried
//! over a sample of its first rows) and one for the whole build. Nothing is
//! ever written to the database: every query goes through
//! [`crate::sql::exec::run`] (a read-only connection or transaction).
//!
//! [`build`] reads a database; [`cache`] keys the result by the database's
//! identity and keeps it on disk; [`matching`] matches a question against
//! it; [`table_notes`] and [`view_notes`] write the matches as the prompt
//! lines MatchTables' attribute prompt and QueryView show.

pub mod build;
pub mod cache;
pub mod matching;

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::graph::{ColumnId, SchemaGraph, TableId};
use crate::types::ViewColumn;

pub use build::build;
pub use cache::{load_or_build, shared, Provenance, ValueCache};
pub use matching::{fold, match_question};

/// The bounds of one index build.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ValueBounds {
    /// Distinct values kept per column; a column with more is marked
    /// incomplete (`ColumnValues::complete`).
    pub per_column: usize,
    /// Longest value kept, in characters; longer values are skipped by the
    /// query itself (never read).
    pub max_chars: usize,
    /// Values (and code pairs) kept over all columns.
    pub total_values: usize,
    /// Bytes of values kept over all columns.
    pub total_bytes: usize,
    /// Time limit of one query.
    pub query_timeout: Duration,
    /// Rows of a column the sampled query reads when the query over the
    /// whole column failed or ran out of time.
    pub sample_rows: usize,
    /// Time limit of the whole build; columns left when it is reached are
    /// not indexed (and named in `ValueIndex::skipped`).
    pub build_timeout: Duration,
}

impl Default for ValueBounds {
    fn default() -> Self {
        ValueBounds {
            per_column: 1_000,
            max_chars: 64,
            total_values: 50_000,
            total_bytes: 4 << 20,
            query_timeout: Duration::from_secs(5),
            sample_rows: 100_000,
            build_timeout: Duration::from_secs(120),
        }
    }
}

/// The distinct short text values of one column.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColumnValues {
    /// Table name, as in the model.
    pub table: String,
    /// Column name, as in the model.
    pub column: String,
    /// Distinct values (each at most `max_chars` characters), sorted.
    pub values: Vec<String>,
    /// Whether these are all the column's short values (false when the
    /// column had more than `per_column`, when only a sample was read, or
    /// when the total budget cut it).
    pub complete: bool,
}

/// A code column beside a name column in one table, one code per name and
/// one name per code (a lookup such as `Party_Role`: `AG` = `Agent`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CodePairs {
    pub table: String,
    /// The code column (`Party_Role_Code`).
    pub code: String,
    /// The name column (`Party_Role_Name`).
    pub name: String,
    /// `[code, name]`, sorted.
    pub pairs: Vec<[String; 2]>,
}

/// The value index of one database for one model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ValueIndex {
    /// The database, as printed (never a password).
    pub database: String,
    /// Indexed columns, in model order.
    pub columns: Vec<ColumnValues>,
    /// Code/name pairs of lookup-like tables.
    #[serde(default)]
    pub codes: Vec<CodePairs>,
    /// Text-like columns not indexed, each with the reason.
    #[serde(default)]
    pub skipped: Vec<String>,
    /// Values and pairs kept in all.
    pub values: usize,
    /// Bytes of the values and pairs kept.
    pub bytes: usize,
    /// Wall time of the build, in milliseconds.
    pub build_ms: f64,
}

/// How a value matched the question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MatchKind {
    /// The value equals a quoted literal or a run of the question's words
    /// (case and accents aside).
    Exact,
    /// The value starts with a quoted literal, or with the question's words.
    Prefix,
    /// A singular/plural variant or a one-letter typo of the value.
    Fuzzy,
}

/// One value of the index that a question matched.
#[derive(Debug, Clone, PartialEq)]
pub struct ValueMatch {
    /// The column holding the value.
    pub column: ColumnId,
    /// The value, as stored.
    pub value: String,
    pub kind: MatchKind,
    /// 0 < score ≤ 1: exact 1, a literal's prefix 0.9, a plural 0.85, a
    /// prefix of words 0.5–0.8, a typo 0.6.
    pub score: f64,
    /// The question's text it matched (a literal, or words), folded.
    pub matched: String,
    /// For a code column: the name the code stands for (`AG` → `Agent`).
    pub means: Option<String>,
}

/// Whether a column of this SQL type holds text worth indexing
/// (`query::measures`, where the type classes live).
pub use crate::query::measures::is_text_type;

/// Whether a column's name says it holds codes (`Party_Role_Code`,
/// `state_cd`, `country_abbr`, `symbol`).
pub fn is_code_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.ends_with("code") || n.ends_with("_cd") || n == "cd" || n.ends_with("abbr") || n.ends_with("symbol")
}

/// Most lines a prompt shows, and most values per line.
const MAX_LINES: usize = 10;
const MAX_EXACT: usize = 5;
const MAX_EXAMPLES: usize = 3;
const MAX_CODES: usize = 5;

/// `'it''s'`: a value as a SQL string literal.
fn quoted(v: &str) -> String {
    format!("'{}'", v.replace('\'', "''"))
}

/// The text of one column's line (without the column): `'Agent'`,
/// `'AG' = Agent`, `e.g. 'dev-east-1', 'dev-apac-2' (values starting with 'dev')`.
fn note_text(ms: &[&ValueMatch]) -> String {
    let mut parts = Vec::new();
    let coded: Vec<String> = ms
        .iter()
        .filter_map(|m| m.means.as_ref().map(|n| format!("{} = {n}", quoted(&m.value))))
        .take(MAX_CODES)
        .collect();
    if !coded.is_empty() {
        parts.push(coded.join(", "));
    }
    let same: Vec<String> = ms
        .iter()
        .filter(|m| m.means.is_none() && m.kind != MatchKind::Prefix)
        .map(|m| quoted(&m.value))
        .take(MAX_EXACT)
        .collect();
    if !same.is_empty() {
        parts.push(same.join(", "));
    }
    // Prefix matches, grouped by what they start with.
    let mut by_prefix: Vec<(&str, Vec<&str>)> = Vec::new();
    for m in ms.iter().filter(|m| m.means.is_none() && m.kind == MatchKind::Prefix) {
        match by_prefix.iter_mut().find(|(p, _)| *p == m.matched) {
            Some((_, vs)) => vs.push(&m.value),
            None => by_prefix.push((&m.matched, vec![&m.value])),
        }
    }
    for (p, vs) in by_prefix {
        let eg: Vec<String> = vs.iter().take(MAX_EXAMPLES).map(|v| quoted(v)).collect();
        parts.push(format!("e.g. {} (values starting with {})", eg.join(", "), quoted(p)));
    }
    parts.join("; ")
}

/// Matches grouped by column, columns ordered by their best score (then
/// by id), each column's matches in rank order.
fn by_column(matches: &[ValueMatch]) -> Vec<(ColumnId, Vec<&ValueMatch>)> {
    let mut groups: BTreeMap<ColumnId, Vec<&ValueMatch>> = BTreeMap::new();
    for m in matches {
        groups.entry(m.column).or_default().push(m);
    }
    let mut out: Vec<(ColumnId, Vec<&ValueMatch>)> = groups.into_iter().collect();
    let best = |ms: &[&ValueMatch]| ms.iter().map(|m| m.score).fold(0.0, f64::max);
    out.sort_by(|a, b| best(&b.1).total_cmp(&best(&a.1)).then(a.0.cmp(&b.0)));
    out
}

/// The attribute prompt's lines for table `t`: `column: 'value'`, one per
/// column of `t` with matched values (empty when nothing matched).
pub fn table_notes(graph: &SchemaGraph, matches: &[ValueMatch], t: TableId) -> Vec<String> {
    by_column(matches)
        .into_iter()
        .filter(|(c, _)| c.table == t)
        .map(|(c, ms)| format!("{}: {}", graph.column_names(c).1, note_text(&ms)))
        .take(MAX_LINES)
        .collect()
}

/// QueryView's lines: `ALIAS: 'value'` for every view column (of every
/// instance) whose table column has matched values, in rank order.
pub fn view_notes(graph: &SchemaGraph, matches: &[ValueMatch], columns: &[ViewColumn]) -> Vec<String> {
    let mut out = Vec::new();
    for (c, ms) in by_column(matches) {
        let (table, column) = graph.column_names(c);
        let text = note_text(&ms);
        for vc in columns.iter().filter(|vc| vc.table == table && vc.column.eq_ignore_ascii_case(column)) {
            out.push(format!("{}: {text}", vc.alias));
        }
    }
    out.truncate(MAX_LINES);
    out
}

#[cfg(test)]
mod tests;
