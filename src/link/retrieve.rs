//! Candidate retrieval for MatchTables (issue #23, item 3): rank the core
//! tables for a question without the LLM, so that tables no sample named
//! (link tables above all) can still be offered to a verification question
//! ([`super::verify`]).
//!
//! Up to three rankers, fused by reciprocal-rank fusion (RRF, Cormack, Clarke and
//! Büttcher 2009): a table at 1-based rank `r` in a list gets `1 / (k + r)`
//! from that list, `k` = [`RRF_K`] = 60 (the paper's constant), and the
//! fused score is the sum over the lists the table appears in; ties keep
//! model order.
//!
//! - **Lexical** ([`lexical`]): the question's words against each table's
//!   words — its name, synonyms, description, column names, column
//!   synonyms and descriptions, the roles other tables give it (role names,
//!   role synonyms, role descriptions), and for a pattern root the names
//!   and columns of the tables below it. Words are split on non-letters,
//!   `_` and camel case, lower-cased and lightly stemmed ([`stem`]);
//!   stop words are dropped. A table scores `Σ weight × idf` over the
//!   question's distinct words it holds (the word's best weight in the
//!   table: [`weights`]); `idf = ln(1 + N / df)` over the N candidate
//!   tables. Only tables with a score above zero are ranked.
//! - **Dense** ([`dense`]): cosine between the question's embedding and
//!   each table's texts (one for the table: name words, description,
//!   synonyms; one per column; for a pattern root also those of the tables
//!   below it); a table scores its best text. Every table is ranked.
//!
//! - **Values** ([`by_values`], with `--values on`): the tables holding a
//!   value the question matched in the value index ([`super::values`]),
//!   or holding it below them in their pattern (a lookup's `'Agent'`
//!   counts for the pattern's root); a table scores its best match. Only
//!   tables with a match are ranked; without the index the list is empty
//!   and the fusion is the other two's.
//!
//! The LLM's votes come first ([`fuse_with_votes`]): the tables the votes
//! kept, in vote order, then the rest in fused order.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use crate::crush::embed::{cosine, Embedder, EmbeddingCache, MiniLm};
use crate::error::Result;
use crate::graph::{SchemaGraph, TableId};
use crate::model::resolve::words;
use crate::types::trace::{RetrievalTrace, Scored};

use super::values::ValueMatch;

/// The RRF constant k (Cormack et al. 2009 use 60): large enough that the
/// first few ranks of one list do not drown the other list.
pub const RRF_K: f64 = 60.0;

/// Weights of a table's words by where they come from.
pub mod weights {
    /// The table's own name and its synonyms.
    pub const NAME: f64 = 3.0;
    /// Column names and synonyms, role names and role synonyms.
    pub const COLUMN: f64 = 1.5;
    /// Table and role descriptions; names of the tables below a pattern root.
    pub const DESCRIPTION: f64 = 1.0;
    /// Column descriptions; columns of the tables below a pattern root.
    pub const DETAIL: f64 = 0.5;
}

/// Words too common in questions to say anything about a table.
const STOP: &[&str] = &[
    "a", "about", "all", "along", "also", "among", "an", "and", "any", "are", "as", "at", "be", "been", "by", "can",
    "count", "did", "do", "doe", "each", "every", "find", "for", "from", "give", "had", "has", "have", "how", "in",
    "is", "it", "its", "list", "many", "me", "more", "most", "much", "name", "not", "number", "of", "on", "or",
    "other", "our", "output", "per", "return", "show", "than", "that", "the", "their", "them", "there", "these",
    "they", "this", "those", "to", "total", "was", "we", "were", "what", "when", "where", "which", "who", "whose",
    "why", "with", "without",
];

/// A light English stemmer for matching question words with schema words:
/// plural and verb endings (`policies` → `policy`, `claims` → `claim`,
/// `addresses` → `address`, `covered` → `cover`, `billing` → `bill`).
/// Not a linguistic stemmer: both sides go through it, so it only has to be
/// consistent.
pub fn stem(word: &str) -> String {
    let w = word.to_lowercase();
    let n = w.chars().count();
    let mut s = if n > 4 && w.ends_with("ies") {
        format!("{}y", &w[..w.len() - 3])
    } else if n > 4 && (w.ends_with("sses") || w.ends_with("xes") || w.ends_with("ches") || w.ends_with("shes")) {
        w[..w.len() - 2].to_string()
    } else if n > 3 && w.ends_with('s') && !w.ends_with("ss") && !w.ends_with("us") && !w.ends_with("is") {
        w[..w.len() - 1].to_string()
    } else {
        w
    };
    let n = s.chars().count();
    if n > 5 && s.ends_with("ing") {
        s.truncate(s.len() - 3);
    } else if n > 4 && s.ends_with("ed") {
        s.truncate(s.len() - 2);
    }
    s
}

/// The stemmed words of `text` worth matching: [`words`], [`stem`], minus
/// stop words and one-character words.
pub fn tokens(text: &str) -> Vec<String> {
    words(text)
        .into_iter()
        .filter(|w| w.chars().count() > 1 && !w.chars().all(|c| c.is_ascii_digit()))
        .map(|w| stem(&w))
        .filter(|w| !STOP.contains(&w.as_str()))
        .collect()
}

/// Each word of table `t` with its best weight ([`weights`]).
pub fn table_words(graph: &SchemaGraph, t: TableId) -> HashMap<String, f64> {
    let mut m: HashMap<String, f64> = HashMap::new();
    let mut add = |text: &str, w: f64| {
        for tok in tokens(text) {
            let e = m.entry(tok).or_insert(0.0);
            if *e < w {
                *e = w;
            }
        }
    };
    let table = graph.table(t);
    add(&table.name, weights::NAME);
    for s in &table.synonyms {
        add(s, weights::NAME);
    }
    add(table.description.as_deref().unwrap_or(""), weights::DESCRIPTION);
    for c in &table.columns {
        add(&c.name, weights::COLUMN);
        for s in &c.synonyms {
            add(s, weights::COLUMN);
        }
        add(c.description.as_deref().unwrap_or(""), weights::DETAIL);
    }
    for rel in graph.model().relationships.iter().filter(|r| r.to.eq_ignore_ascii_case(&table.name)) {
        if let Some(role) = &rel.role {
            add(role, weights::COLUMN);
            for s in &rel.role_synonyms {
                add(s, weights::COLUMN);
            }
            add(rel.role_description.as_deref().unwrap_or(""), weights::DESCRIPTION);
        }
    }
    for c in super::context::subtree(graph, t) {
        let inner = graph.table(c);
        add(&inner.name, weights::DESCRIPTION);
        for s in &inner.synonyms {
            add(s, weights::DESCRIPTION);
        }
        for col in &inner.columns {
            add(&col.name, weights::DETAIL);
        }
    }
    m
}

/// The lexical ranking of `tables` for `question`: tables with a score
/// above zero, best first (ties: the order of `tables`).
pub fn lexical(graph: &SchemaGraph, question: &str, tables: &[TableId]) -> Vec<(TableId, f64)> {
    let docs: Vec<HashMap<String, f64>> = tables.iter().map(|&t| table_words(graph, t)).collect();
    let q: HashSet<String> = tokens(question).into_iter().collect();
    let n = tables.len() as f64;
    let mut scored: Vec<(usize, f64)> = docs
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let s: f64 = q
                .iter()
                .filter_map(|tok| {
                    let w = d.get(tok)?;
                    let df = docs.iter().filter(|o| o.contains_key(tok)).count() as f64;
                    Some(w * (1.0 + n / df).ln())
                })
                .sum();
            (i, s)
        })
        .filter(|&(_, s)| s > 0.0)
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored.into_iter().map(|(i, s)| (tables[i], s)).collect()
}

/// The texts of table `t` the dense ranker compares with the question: the
/// table's (name words, description, synonyms), then one per column, then
/// the same for the tables below it in its pattern.
pub fn table_texts(graph: &SchemaGraph, t: TableId) -> Vec<String> {
    let mut out = Vec::new();
    for id in std::iter::once(t).chain(super::context::subtree(graph, t)) {
        let table = graph.table(id);
        let name = words(&table.name).join(" ");
        let mut s = name.clone();
        if let Some(d) = table.description.as_deref().map(str::trim).filter(|d| !d.is_empty()) {
            s.push_str(": ");
            s.push_str(d);
        }
        if !table.synonyms.is_empty() {
            s.push_str(&format!(" (also: {})", table.synonyms.join(", ")));
        }
        out.push(s);
        for c in &table.columns {
            let mut s = format!("{name} {}", words(&c.name).join(" "));
            if let Some(d) = c.description.as_deref().map(str::trim).filter(|d| !d.is_empty()) {
                s.push_str(": ");
                s.push_str(d);
            }
            if !c.synonyms.is_empty() {
                s.push_str(&format!(" (also: {})", c.synonyms.join(", ")));
            }
            out.push(s);
        }
    }
    out
}

/// The dense ranking of `tables` for `question` with `embedder`: every
/// table, best first (ties: the order of `tables`). The schema's texts go
/// through the on-disk [`EmbeddingCache`] when `cache` is given.
pub fn dense(
    graph: &SchemaGraph,
    question: &str,
    tables: &[TableId],
    embedder: &dyn Embedder,
    cache: Option<&EmbeddingCache>,
) -> Result<Vec<(TableId, f64)>> {
    let per_table: Vec<Vec<String>> = tables.iter().map(|&t| table_texts(graph, t)).collect();
    let all: Vec<String> = per_table.iter().flatten().cloned().collect();
    let vecs = match cache {
        Some(c) => c.get_or_embed(embedder, &all)?,
        None => embedder.embed(&all)?,
    };
    let q = embedder.embed(&[question.to_string()])?;
    let Some(q) = q.first() else { return Ok(Vec::new()) };
    let mut at = 0;
    let mut scored: Vec<(usize, f64)> = Vec::new();
    for (i, texts) in per_table.iter().enumerate() {
        let best = vecs[at..at + texts.len()].iter().map(|v| cosine(q, v)).fold(f64::NEG_INFINITY, f64::max).max(-1.0);
        at += texts.len();
        scored.push((i, best));
    }
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    Ok(scored.into_iter().map(|(i, s)| (tables[i], s)).collect())
}

/// The values ranking of `tables`: each table with a value of `matches` in
/// one of its columns or in a column of a table below it in its pattern,
/// scored by its best match, best first (ties: the order of `tables`).
pub fn by_values(graph: &SchemaGraph, matches: &[ValueMatch], tables: &[TableId]) -> Vec<(TableId, f64)> {
    let mut scored: Vec<(usize, f64)> = tables
        .iter()
        .enumerate()
        .filter_map(|(i, &t)| {
            let mut own: Vec<TableId> = vec![t];
            own.extend(super::context::subtree(graph, t));
            let best = matches.iter().filter(|m| own.contains(&m.column.table)).map(|m| m.score).fold(0.0, f64::max);
            (best > 0.0).then_some((i, best))
        })
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored.into_iter().map(|(i, s)| (tables[i], s)).collect()
}

/// Reciprocal-rank fusion of ranked lists (see the module docs): each
/// table's `Σ 1 / (k + rank)`, best first; ties keep first appearance
/// across the lists in order.
pub fn rrf(lists: &[Vec<TableId>], k: f64) -> Vec<(TableId, f64)> {
    let mut order: Vec<TableId> = Vec::new();
    let mut score: HashMap<TableId, f64> = HashMap::new();
    for list in lists {
        for (r, &t) in list.iter().enumerate() {
            if !order.contains(&t) {
                order.push(t);
            }
            *score.entry(t).or_insert(0.0) += 1.0 / (k + (r + 1) as f64);
        }
    }
    let mut out: Vec<(usize, TableId, f64)> = order.iter().enumerate().map(|(i, &t)| (i, t, score[&t])).collect();
    out.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.0.cmp(&b.0)));
    out.into_iter().map(|(_, t, s)| (t, s)).collect()
}

/// The final candidate order: the tables the votes kept (`kept`, in vote
/// order) first, then every other table of `fused` in fused order.
pub fn fuse_with_votes(kept: &[TableId], fused: &[TableId]) -> Vec<TableId> {
    let mut out: Vec<TableId> = Vec::new();
    for &t in kept.iter().chain(fused) {
        if !out.contains(&t) {
            out.push(t);
        }
    }
    out
}

/// The rankings of `tables` and their fusion, as the trace records them
/// (`candidates` and `verified` are left to the caller). Without
/// `embedder` (or when it fails) the dense list is empty and a note says
/// why; `values` are the question's matches in the value index (empty
/// without one), which rank the tables holding them.
pub fn rank(
    graph: &SchemaGraph,
    question: &str,
    tables: &[TableId],
    embedder: std::result::Result<&dyn Embedder, String>,
    cache: Option<&EmbeddingCache>,
    values: &[ValueMatch],
) -> RetrievalTrace {
    let mut notes = Vec::new();
    let lex = lexical(graph, question, tables);
    let den = match embedder {
        Ok(e) => match dense(graph, question, tables, e, cache) {
            Ok(d) => d,
            Err(err) => {
                notes.push(format!("dense retrieval failed, lexical only: {err}"));
                Vec::new()
            }
        },
        Err(why) => {
            notes.push(format!("dense retrieval off, lexical only: {why}"));
            Vec::new()
        }
    };
    let val = by_values(graph, values, tables);
    let ids = |l: &[(TableId, f64)]| l.iter().map(|p| p.0).collect::<Vec<_>>();
    let fused = rrf(&[ids(&lex), ids(&den), ids(&val)], RRF_K);
    let named = |l: &[(TableId, f64)]| {
        l.iter().map(|&(t, score)| Scored { table: graph.name(t).to_string(), score }).collect::<Vec<_>>()
    };
    RetrievalTrace {
        lexical: named(&lex),
        dense: named(&den),
        values: named(&val),
        fused: named(&fused),
        rrf_k: RRF_K,
        notes,
        ..RetrievalTrace::default()
    }
}

/// The process's MiniLM (loaded once, from `MiniLm::default_dir`), or why
/// there is none (files missing: run scripts/fetch-minilm.sh).
pub fn default_embedder() -> std::result::Result<&'static dyn Embedder, String> {
    static MODEL: OnceLock<std::result::Result<MiniLm, String>> = OnceLock::new();
    match MODEL.get_or_init(|| MiniLm::load_default().map_err(|e| e.to_string())) {
        Ok(m) => Ok(m as &dyn Embedder),
        Err(e) => Err(e.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crush::embed::HashEmbedder;

    use crate::graph::fixtures::ddo;

    #[test]
    fn words_split_on_underscores_camel_case_and_digits() {
        assert_eq!(words("Policy_Holder"), ["policy", "holder"]);
        assert_eq!(words("PolicyHolderID"), ["policy", "holder", "id"]);
        assert_eq!(words("HTTPServer2go"), ["http", "server", "2", "go"]);
        assert_eq!(words("RSPOOL2CLIENT"), ["rspool", "2", "client"]);
        assert_eq!(words("  what's the dev-eu datacenter?"), ["what", "s", "the", "dev", "eu", "datacenter"]);
        assert!(words("").is_empty() && words("__ --").is_empty());
    }

    #[test]
    fn stemming_maps_plurals_and_verb_forms_together() {
        for (a, b) in [
            ("policies", "policy"),
            ("claims", "claim"),
            ("addresses", "address"),
            ("boxes", "box"),
            ("billing", "bill"),
            ("covered", "cover"),
            ("status", "status"),
            ("analysis", "analysis"),
            ("class", "class"),
            ("datacenters", "datacenter"),
        ] {
            assert_eq!(stem(a), b, "{a}");
        }
        assert_eq!(stem("Policy"), stem("policies"));
        // Non-ASCII words do not panic on byte slicing.
        assert_eq!(stem("éèés"), "éèé");
        assert_eq!(stem("naïves"), "naïve");
    }

    #[test]
    fn tokens_drop_stop_words_digits_and_single_letters() {
        assert_eq!(tokens("List the names of all clients in 2020, a B"), ["client"]);
        assert_eq!(tokens("Which datacenters host pools?"), ["datacenter", "host", "pool"]);
    }

    #[test]
    fn lexical_ranks_the_named_tables_first() {
        let g = ddo();
        let core = g.core_tables();
        let r = lexical(&g, "List customers who use datacenters with names starting with 'dev'", &core);
        let names: Vec<&str> = r.iter().map(|&(t, _)| g.name(t)).collect();
        // DDO describes CLIENT as a customer: the two tables the question
        // is about lead.
        let mut top: Vec<&str> = names.iter().take(2).copied().collect();
        top.sort();
        assert_eq!(top, ["CLIENT", "DATACENTER"], "{names:?}");
        assert!(r.iter().all(|p| p.1 > 0.0));
        // A question with no schema word ranks nothing.
        assert!(lexical(&g, "Hello there", &core).is_empty());
    }

    #[test]
    fn rrf_sums_reciprocal_ranks_and_keeps_order_on_ties() {
        let (a, b, c, d) = (0, 1, 2, 3);
        let f = rrf(&[vec![a, b, c], vec![b, c, d]], 60.0);
        let order: Vec<TableId> = f.iter().map(|p| p.0).collect();
        // b: 1/62 + 1/61; c: 1/63 + 1/62; a: 1/61; d: 1/63.
        assert_eq!(order, [b, c, a, d]);
        assert!((f[0].1 - (1.0 / 62.0 + 1.0 / 61.0)).abs() < 1e-12);
        // Symmetric lists tie: first appearance wins.
        let f = rrf(&[vec![a, b], vec![b, a]], 60.0);
        assert_eq!(f.iter().map(|p| p.0).collect::<Vec<_>>(), [a, b]);
        assert!(rrf(&[vec![], vec![]], 60.0).is_empty());
    }

    #[test]
    fn votes_rank_first_then_retrieval() {
        assert_eq!(fuse_with_votes(&[5, 2], &[2, 7, 5, 1]), [5, 2, 7, 1]);
        assert_eq!(fuse_with_votes(&[], &[3, 1]), [3, 1]);
    }

    #[test]
    fn rank_fuses_lexical_and_dense_and_notes_a_missing_embedder() {
        let g = ddo();
        let core = g.core_tables();
        let q = "List customers who use datacenters with names starting with 'dev'";
        let e = HashEmbedder::default();
        let t = rank(&g, q, &core, Ok(&e as &dyn Embedder), None, &[]);
        assert_eq!(t.dense.len(), core.len());
        assert_eq!(t.fused.len(), core.len());
        let mut top: Vec<&str> = t.fused.iter().take(2).map(|s| s.table.as_str()).collect();
        top.sort();
        assert_eq!(top, ["CLIENT", "DATACENTER"], "{:?}", t.fused);
        assert!(t.notes.is_empty());
        let t = rank(&g, q, &core, Err("no model files".into()), None, &[]);
        assert!(t.dense.is_empty());
        assert_eq!(
            t.fused.iter().map(|s| &s.table).collect::<Vec<_>>(),
            t.lexical.iter().map(|s| &s.table).collect::<Vec<_>>()
        );
        assert_eq!(t.notes, ["dense retrieval off, lexical only: no model files"]);
    }

    fn matched(g: &SchemaGraph, table: &str, column: &str, value: &str, score: f64) -> ValueMatch {
        let t = g.table_id(table).unwrap();
        let column = g.table(t).columns.iter().position(|c| c.name == column).unwrap();
        ValueMatch {
            column: crate::types::ColumnId { table: t, column },
            value: value.into(),
            kind: crate::link::values::MatchKind::Exact,
            score,
            matched: value.to_lowercase(),
            means: None,
        }
    }

    #[test]
    fn values_rank_the_tables_holding_them_and_their_pattern_roots() {
        let g = ddo();
        let core = g.core_tables();
        let dc = g.table_id("DATACENTER").unwrap();
        let pool = g.table_id("RESOURCEPOOL").unwrap();
        let dev = matched(&g, "DATACENTER", "name", "dev-eu-1", 0.9);
        assert_eq!(by_values(&g, std::slice::from_ref(&dev), &core), [(dc, 0.9)]);
        assert!(by_values(&g, &[], &core).is_empty());
        // A value of a table below a pattern root counts for the root.
        let cpu = g.table(g.table_id("RCPU").unwrap()).columns[1].name.clone();
        let inner = matched(&g, "RCPU", &cpu, "high", 0.6);
        assert_eq!(by_values(&g, &[dev.clone(), inner], &core), [(dc, 0.9), (pool, 0.6)]);
        // In the fusion: words that name no table, a value that DATACENTER holds.
        let q = "Which ones start with 'dev-eu-1'?";
        let without = rank(&g, q, &core, Err("off".into()), None, &[]);
        let with = rank(&g, q, &core, Err("off".into()), None, std::slice::from_ref(&dev));
        assert!(without.values.is_empty());
        assert_eq!(with.values, [Scored { table: "DATACENTER".into(), score: 0.9 }]);
        assert_eq!(with.fused[0].table, "DATACENTER", "{:?}", with.fused);
        let at = |t: &RetrievalTrace| t.fused.iter().position(|s| s.table == "DATACENTER").unwrap_or(usize::MAX);
        assert!(at(&without) > 0, "{:?}", without.fused);
        // The trace of a run without values is the one recorded before them.
        assert!(!serde_json::to_string(&without).unwrap().contains("\"values\""));
    }
}
