//! Who runs phase 1. `lucy ask` and `lucy bench` pick one [`Linker`] and
//! [`super::ask`] runs it, so the benchmark measures exactly what `ask`
//! does.

use serde::{Deserialize, Serialize};

use crate::crush;
use crate::crush::embed::minilm::MiniLm;
use crate::error::{Error, Result};
use crate::graph::SchemaGraph;
use crate::llm::{ChatModel, NOT_CONFIGURED_HINT};
use crate::types::Relevance;

/// The phase-1 strategy (when no tables are given).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Linker {
    /// MatchTables (LLM) over every core table.
    #[default]
    Llm,
    /// MatchTables offered only the tables of CRUSH's greedy pick of
    /// `budget` schema elements (for large models); `probes` replace the
    /// LLM's hallucinated schema, e.g. `"T(c1, c2); U(c3)"`.
    CrushPrefilter { budget: usize, probes: Option<String> },
    /// No LLM: CRUSH's round-robin greedy over MiniLM embeddings of the
    /// question's phrases picks `budget` columns (on BIRD it finds more gold
    /// columns than the exact optimum of the paper's objective, see
    /// docs/crush.md). QueryView needs an LLM, so the run stops after the
    /// view.
    Offline { budget: usize },
}

impl Linker {
    /// The default: MatchTables over every core table.
    pub fn is_llm(&self) -> bool {
        *self == Linker::Llm
    }

    /// Whether this strategy needs an LLM for phase 1.
    pub fn needs_llm(&self) -> bool {
        !matches!(self, Linker::Offline { .. })
    }

    /// The core tables MatchTables may offer (`None`: all), for the
    /// strategies that prefilter.
    pub(super) fn restriction(
        &self,
        graph: &SchemaGraph,
        question: &str,
        llm: Option<&dyn ChatModel>,
    ) -> Result<Option<Vec<String>>> {
        match self {
            Linker::CrushPrefilter { budget, probes } => {
                let embedder = MiniLm::load_default()?;
                // MatchTables maps an inner table to its pattern root itself;
                // the trace keeps CRUSH's own picks.
                Ok(Some(crush::prefilter_tables(graph, question, probes.as_deref(), *budget, llm, &embedder)?))
            }
            Linker::Llm | Linker::Offline { .. } => Ok(None),
        }
    }

    /// Phase 1 without an LLM (`Offline`): the relevant tables and
    /// columns, and the trace's `source`.
    pub(super) fn offline(&self, graph: &SchemaGraph, question: &str) -> Result<Option<(Relevance, String)>> {
        let Linker::Offline { budget } = self else { return Ok(None) };
        let embedder = MiniLm::load_default().map_err(|e| {
            Error::Input(format!(
                "{NOT_CONFIGURED_HINT}. The offline linker used without an LLM is unavailable too: {e}"
            ))
        })?;
        let (tables, columns) = crush::embedding_link(graph, question, *budget, &embedder)?;
        let mut tids = Vec::new();
        for t in &tables {
            tids.push(graph.require_table(t)?);
        }
        let mut cids = Vec::new();
        for c in &columns {
            cids.push(graph.require_column(graph.require_table(&c.table)?, &c.column)?);
        }
        let source = format!("offline embedding linker (CRUSH greedy, MiniLM, budget {budget}): no LLM configured");
        Ok(Some((super::relevance_of(graph, &tids, &cids), source)))
    }
}
