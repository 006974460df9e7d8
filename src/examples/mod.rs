//! Verified queries: a model's library of (question, SQL) pairs over its
//! base tables, the way data teams keep them (Snowflake Cortex Analyst's
//! verified queries, WrenAI's question–SQL pairs, the dynamic few-shot
//! vector store of "Dynamic Vector Search").
//!
//! A model `M.json` may have `M.examples.jsonl` beside it (or any file given
//! with `--examples`): one JSON object per line, `{"question": …, "sql": …}`
//! (a benchmark pool adds `"database"`). This module reads and appends such
//! files with errors naming file and line (`file.rs`), checks each SQL
//! against the model with `lucy check`'s rules and optionally runs it
//! (`validate.rs`), retrieves the examples nearest a question by embedding
//! similarity (`retrieve.rs`), and rewrites an example's SQL over lucy's
//! view when every table it reads is in the view (`rewrite.rs`), so that
//! QueryView sees it in the view's column names.

pub mod file;
pub mod pool;
pub mod retrieve;
pub mod rewrite;
pub mod validate;

use serde::{Deserialize, Serialize};

pub use file::{default_path, Entry, Example, ExamplesFile};
pub use retrieve::{retrieve, Retrieved};
pub use rewrite::rewrite_over_view;
pub use validate::{check_entry, load_for_model, ExampleCheck};

/// How many examples `lucy ask` retrieves by default.
pub const DEFAULT_K: usize = 3;

/// What `lucy ask` does with the tables of the retrieved examples
/// (`--example-tables`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ExampleTables {
    /// Ignore them: the examples only reach the QueryView prompt.
    Off,
    /// Offer them to MatchTables when a prefilter (CRUSH) restricts the core
    /// tables it is shown: the examples' core tables join the offered list.
    /// Without a restriction every core table is offered already, so this
    /// changes nothing.
    #[default]
    Offer,
    /// Add them to the relevant set MatchTables returns, with the columns
    /// the example's SQL reads (the view then covers the example).
    Add,
}

impl ExampleTables {
    /// The flag value.
    pub fn as_str(self) -> &'static str {
        match self {
            ExampleTables::Off => "off",
            ExampleTables::Offer => "offer",
            ExampleTables::Add => "add",
        }
    }

    /// Whether this is the default (`offer`), for `skip_serializing_if`.
    pub fn is_default(&self) -> bool {
        *self == ExampleTables::default()
    }
}

/// Examples retrieved for one question, handed to `pipeline::ask`
/// (`lucy ask --examples`): where they came from and what to do with them.
#[derive(Debug, Clone, PartialEq)]
pub struct ExamplesUse {
    /// The examples file (for the trace).
    pub file: String,
    /// The embedder that ranked them (for the trace).
    pub embedder: String,
    /// How many were asked for.
    pub k: usize,
    /// What their tables do in MatchTables.
    pub tables: ExampleTables,
    /// The retrieved examples, most similar first.
    pub retrieved: Vec<Retrieved>,
}

/// The examples of the file at `path` nearest `question`, ready for
/// `pipeline::ask`: the file loaded and checked against the model (a stale
/// example is an error naming its line), then the `k` most similar by
/// `embedder`. `file` is how the trace names the file (a server names it
/// without its directory). Used by `lucy ask` and by `lucy serve`'s asks.
#[allow(clippy::too_many_arguments)]
pub fn use_file(
    path: &std::path::Path,
    file: String,
    graph: &crate::graph::SchemaGraph,
    question: &str,
    dialect: crate::types::Dialect,
    embedder: &dyn crate::crush::embed::Embedder,
    k: usize,
    tables: ExampleTables,
) -> crate::error::Result<ExamplesUse> {
    let usable = load_for_model(path, graph, dialect)?;
    let retrieved = retrieve(embedder, question, &usable, k)?;
    Ok(ExamplesUse { file, embedder: embedder.id(), k, tables, retrieved })
}
