//! The seed methods' benchmark plumbing (issue 24): example pools built
//! from a suite without leakage, their retrieval per question, and the
//! seeded question sample the accuracy work shares.
//!
//! The `fewshot` method itself (DynVS: the top-k pool examples by MiniLM
//! similarity, the schema, one SQL call) is `pipeline::direct_sql` with
//! `AskOptions::fewshot` set: the same LLM, decoding, grammar, guard,
//! repair round and execution as `direct`, only the prompt differs
//! (`prompts/fewshot_sql.j2`).

use std::collections::BTreeMap;
use std::sync::Arc;

use super::suite::{Question, Suite};
use crate::crush::embed::{cosine, Embedder};
use crate::error::{Error, Result};
use crate::examples::pool::{cross_database, in_database, Pool, PoolKind, SuiteItem};
use crate::examples::Retrieved;
use crate::graph::SchemaGraph;
use crate::sql::exec::Database;

/// The database a question belongs to: its `db_id`, else the suite's name.
pub fn database_of(suite: &Suite, q: &Question) -> String {
    q.db_id.clone().unwrap_or_else(|| suite.file.name.clone())
}

/// A suite's questions as the pool builders and the leakage check see them.
pub fn suite_items(suite: &Suite) -> Vec<SuiteItem> {
    suite
        .questions
        .iter()
        .map(|q| SuiteItem {
            id: q.id.clone(),
            database: database_of(suite, q),
            question: q.question.clone(),
            gold_sql: q.gold_sql.clone(),
        })
        .collect()
}

/// Build a pool of `kind` for `suite`: `cross-database` from its questions
/// (each question later sees only other databases' entries);
/// `in-database` from each of its databases' schema and values
/// (`per_column` values per text column).
pub fn build_pool(suite: &Suite, kind: PoolKind, per_column: usize) -> Result<Pool> {
    match kind {
        PoolKind::CrossDatabase => Ok(cross_database(&suite_items(suite))),
        PoolKind::InDatabase => {
            let mut dbs: BTreeMap<String, &Question> = BTreeMap::new();
            for q in &suite.questions {
                dbs.entry(database_of(suite, q)).or_insert(q);
            }
            let mut entries = Vec::new();
            for (name, q) in dbs {
                let graph = SchemaGraph::new(crate::model::load(suite.model_path(q)?)?)?;
                let Some(path) = suite.database_path(q)? else {
                    return Err(Error::Input(format!(
                        "suite {} has no database: an in-database pool reads its values",
                        suite.file.name
                    )));
                };
                entries.extend(in_database(&graph, &Database::Sqlite(path), &name, per_column)?);
            }
            Ok(Pool { kind: PoolKind::InDatabase, entries })
        }
    }
}

/// A pool with every entry's question embedded once, for retrieval per
/// question.
pub struct PoolIndex {
    pub pool: Pool,
    /// The file it came from (reports).
    pub file: String,
    vectors: Vec<Vec<f32>>,
    embedder: Arc<dyn Embedder>,
}

impl std::fmt::Debug for PoolIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PoolIndex").field("file", &self.file).field("kind", &self.pool.kind).finish()
    }
}

impl PoolIndex {
    /// Embed every entry's question.
    pub fn new(pool: Pool, file: String, embedder: Arc<dyn Embedder>) -> Result<PoolIndex> {
        let texts: Vec<String> = pool.entries.iter().map(|e| e.question.clone()).collect();
        let mut vectors = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(256) {
            vectors.extend(embedder.embed(chunk)?);
        }
        if vectors.len() != texts.len() {
            return Err(Error::Input(format!("embedder {} returned too few vectors", embedder.id())));
        }
        Ok(PoolIndex { pool, file, vectors, embedder })
    }

    /// The embedder's id.
    pub fn embedder_id(&self) -> String {
        self.embedder.id()
    }

    /// The `k` entries most similar to `q` among those it may see
    /// ([`Pool::candidates`]), highest cosine first, ties by pool order.
    pub fn retrieve(&self, suite: &Suite, q: &Question, k: usize) -> Result<Vec<Retrieved>> {
        let db = database_of(suite, q);
        let allowed = self.pool.candidate_indices(&db, &q.question, &q.gold_sql);
        if allowed.is_empty() || k == 0 {
            return Ok(Vec::new());
        }
        let v = self.embedder.embed(std::slice::from_ref(&q.question))?;
        let Some(qv) = v.first() else { return Ok(Vec::new()) };
        let mut scored: Vec<(f64, usize)> = allowed.into_iter().map(|i| (cosine(qv, &self.vectors[i]), i)).collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        Ok(scored
            .into_iter()
            .take(k)
            .map(|(score, i)| {
                let e = &self.pool.entries[i];
                Retrieved { line: i + 2, question: e.question.clone(), sql: e.sql.clone(), score, tables: Vec::new() }
            })
            .collect())
    }
}

/// `n` questions drawn without replacement by a seeded shuffle (SplitMix64
/// driving Fisher–Yates: the same ids for a seed on every machine and
/// version), returned in suite order.
pub fn sample(questions: &[Question], n: usize, seed: u64) -> Vec<Question> {
    let mut idx: Vec<usize> = (0..questions.len()).collect();
    let mut state = seed;
    let mut next = || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    for i in (1..idx.len()).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        idx.swap(i, j);
    }
    let mut keep: Vec<usize> = idx.into_iter().take(n).collect();
    keep.sort_unstable();
    keep.into_iter().map(|i| questions[i].clone()).collect()
}

/// The label results carry: `cross-database` or `in-database`.
pub fn kind_label(kind: PoolKind) -> &'static str {
    kind.as_str()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn qs(n: usize) -> Vec<Question> {
        (0..n)
            .map(|i| Question {
                id: i.to_string(),
                question: format!("q{i}"),
                evidence: None,
                gold_sql: "SELECT 1".into(),
                db_id: None,
                note: None,
            })
            .collect()
    }

    #[test]
    fn sample_is_seeded_sorted_and_without_repeats() {
        let all = qs(1034);
        let a = sample(&all, 100, 1);
        assert_eq!(a.len(), 100);
        assert_eq!(a, sample(&all, 100, 1));
        assert_ne!(a, sample(&all, 100, 2));
        let ids: Vec<usize> = a.iter().map(|q| q.id.parse().unwrap()).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(sample(&all[..10], 100, 1).len(), 10);
    }
}
