//! RASL (Eben et al., 2025; `docs/benchmarks.md`, "Seed methods"): keyword
//! extraction (one call, a JSON list), keyword-level retrieval of table and
//! column entities, the top N tables by relevance, one table-ranking call,
//! then the direct baseline's SQL call over the predicted tables, with up to
//! two follow-ups on an error or an empty result (the paper's
//! self-correction).

use std::collections::BTreeMap;
use std::time::Instant;

use super::{direct_over, failure, kind_of, new_trace, no_llm, AskOptions, DirectOutcome};
use crate::crush::embed::{cosine, Embedder};
use crate::error::{Error, Result};
use crate::graph::{SchemaGraph, TableId};
use crate::llm::{traced, ChatModel, ChatRequest};
use crate::prompts::Prompts;
use crate::types::trace::{ListStep, MatchTrace};

/// Entities retrieved per keyword and entity type (the paper's top-100).
pub const PER_KEYWORD: usize = 100;
/// Tables kept for the ranking call (the paper's N = 50).
pub const TOP_TABLES: usize = 50;

/// One retrievable entity: a table or a column, as text.
struct Entity {
    table: TableId,
    column: bool,
    text: String,
}

fn entities(graph: &SchemaGraph) -> Vec<Entity> {
    let mut out = Vec::new();
    for (t, table) in graph.model().tables.iter().enumerate() {
        let d = table.description.as_deref().unwrap_or("");
        out.push(Entity {
            table: t,
            column: false,
            text: format!("{}: {d}", table.name).trim_end_matches(": ").into(),
        });
        for c in &table.columns {
            let d = c.description.as_deref().unwrap_or("");
            let text = format!("{}.{}: {d}", table.name, c.name);
            out.push(Entity { table: t, column: true, text: text.trim_end_matches(": ").into() });
        }
    }
    out
}

/// Tables by summed relevance: for each keyword and entity type (table,
/// column), the top [`PER_KEYWORD`] entities by cosine; a table scores, per
/// keyword and type, its best retrieved entity. No calibration weights (they
/// need a training split). Highest first, ties by model order; at most `n`.
fn rank_tables(
    graph: &SchemaGraph,
    keywords: &[String],
    embedder: &dyn Embedder,
    n: usize,
) -> Result<Vec<(TableId, f64)>> {
    let ents = entities(graph);
    let texts: Vec<String> = ents.iter().map(|e| e.text.clone()).collect();
    let ev = embedder.embed(&texts)?;
    let kv = embedder.embed(keywords)?;
    let mut score: BTreeMap<TableId, f64> = BTreeMap::new();
    for k in &kv {
        for column in [false, true] {
            let mut hits: Vec<(f64, usize)> = ents
                .iter()
                .enumerate()
                .filter(|(_, e)| e.column == column)
                .map(|(i, _)| (cosine(k, &ev[i]), i))
                .collect();
            hits.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            let mut best: BTreeMap<TableId, f64> = BTreeMap::new();
            for (s, i) in hits.into_iter().take(PER_KEYWORD) {
                let b = best.entry(ents[i].table).or_insert(f64::MIN);
                *b = b.max(s);
            }
            for (t, s) in best {
                *score.entry(t).or_default() += s;
            }
        }
    }
    let mut ranked: Vec<(TableId, f64)> = score.into_iter().collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    ranked.truncate(n);
    Ok(ranked)
}

/// The keyword answer: a JSON list of strings (a code fence or text around
/// it is tolerated).
pub fn parse_keywords(answer: &str) -> Result<Vec<String>> {
    let bad = || {
        Error::llm(
            "rasl_keywords",
            format!("answer is not a JSON list of keywords: {:?}", answer.chars().take(200).collect::<String>()),
        )
    };
    let (Some(a), Some(b)) = (answer.find('['), answer.rfind(']')) else { return Err(bad()) };
    if b < a {
        return Err(bad());
    }
    let list: Vec<serde_json::Value> = serde_json::from_str(&answer[a..=b]).map_err(|_| bad())?;
    let kws: Vec<String> =
        list.iter().filter_map(|v| v.as_str()).map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect();
    if kws.is_empty() {
        return Err(bad());
    }
    Ok(kws)
}

/// The ranking answer: `<table rank="i">NAME</table>` items, in rank order,
/// mapped onto `offered` (case-insensitive; other names are dropped).
pub fn parse_ranking(answer: &str, offered: &[String]) -> Result<Vec<String>> {
    let mut items: Vec<(usize, usize, String)> = Vec::new();
    let mut rest = answer;
    let mut pos = 0;
    while let Some(i) = rest.find("<table") {
        let after = &rest[i..];
        let Some(gt) = after.find('>') else { break };
        let Some(end) = after.find("</table>") else { break };
        if end < gt {
            rest = &after[end + 8..];
            continue;
        }
        let attrs = &after[..gt];
        let rank = attrs
            .split("rank=")
            .nth(1)
            .map(|r| r.trim_matches(|c: char| c == '"' || c == '\'' || c == '/' || c.is_whitespace()))
            .and_then(|r| r.trim_end_matches(['"', '\'']).parse::<usize>().ok())
            .unwrap_or(usize::MAX);
        let name = after[gt + 1..end].trim().to_string();
        items.push((rank, pos, name));
        pos += 1;
        rest = &after[end + 8..];
    }
    items.sort();
    let mut out: Vec<String> = Vec::new();
    for (_, _, name) in items {
        let bare = name.rsplit('.').next().unwrap_or(&name);
        if let Some(t) = offered.iter().find(|o| o.eq_ignore_ascii_case(&name) || o.eq_ignore_ascii_case(bare)) {
            if !out.contains(t) {
                out.push(t.clone());
            }
        }
    }
    if out.is_empty() {
        return Err(Error::llm(
            "rasl_tables",
            format!(
                "answer names none of the offered tables in <table rank=\"…\">…</table> items: {:?}",
                answer.chars().take(200).collect::<String>()
            ),
        ));
    }
    Ok(out)
}

/// One temperature-0 call with `prompt`, recorded as a step of `mt`; the
/// answer's text (`max_tokens`: the method's cap, if any).
pub(super) fn ask_once(
    llm: &dyn ChatModel,
    phase: &str,
    prompt: String,
    mt: &mut MatchTrace,
    max_tokens: Option<usize>,
) -> Result<String> {
    let req = ChatRequest {
        max_tokens: max_tokens.map(|n| n.min(u32::MAX as usize) as u32),
        ..ChatRequest::greedy(phase, prompt)
    };
    let (call, result) = traced::call(llm, &req);
    mt.cost.add_call(&call);
    mt.steps.push(ListStep { prompt: phase.into(), call, ..Default::default() });
    result.map(|r| r.choices.into_iter().next().unwrap_or_default())
}

/// RASL end to end for one question.
pub fn rasl_sql(
    graph: &SchemaGraph,
    question: &str,
    evidence: Option<&str>,
    opts: &AskOptions,
    llm: Option<&dyn ChatModel>,
    embedder: &dyn Embedder,
) -> Result<DirectOutcome> {
    let started = Instant::now();
    let Some(llm) = llm else { return Err(no_llm("the rasl method")) };
    let prompts = Prompts::load(opts.prompts_dir.as_deref())?;
    let mut trace = new_trace(graph, "rasl", question, opts, Some(llm));
    let mut mt = MatchTrace {
        source: format!("rasl (keywords, {}, top {TOP_TABLES} tables, ranking)", embedder.id()),
        ..Default::default()
    };
    let linked = (|| -> Result<Vec<String>> {
        let kw_prompt = prompts.render("rasl_keywords", serde_json::json!({ "question": question }))?;
        let keywords = parse_keywords(&ask_once(llm, "rasl_keywords", kw_prompt, &mut mt, None)?)?;
        if let Some(s) = mt.steps.last_mut() {
            s.samples = vec![keywords.clone()];
        }
        let ranked = rank_tables(graph, &keywords, embedder, TOP_TABLES)?;
        let offered: Vec<String> = ranked.iter().map(|(t, _)| graph.name(*t).to_string()).collect();
        mt.core_tables = offered.clone();
        let ids: Vec<TableId> = ranked.iter().map(|(t, _)| *t).collect();
        let vars = serde_json::json!({
            "question": question,
            "database": graph.model().name,
            "schema": super::ddl::ddl(graph, Some(&ids), true),
            "evidence": evidence.unwrap_or(""),
        });
        let answer = ask_once(llm, "rasl_tables", prompts.render("rasl_tables", &vars)?, &mut mt, None)?;
        parse_ranking(&answer, &offered)
    })();
    let tables = match linked {
        Ok(t) => t,
        Err(e) => {
            let f = failure("match_tables", kind_of(&e), e.to_string());
            return Ok(super::phase1_failed(trace, mt, f, started));
        }
    };
    let mut ids = Vec::new();
    for t in &tables {
        ids.push(graph.require_table(t)?);
    }
    mt.tables = tables;
    mt.cost.ms = started.elapsed().as_secs_f64() * 1000.0;
    trace.match_tables = Some(mt);
    // The paper's self-correction: up to two follow-ups, on an error or an
    // empty result.
    let mut opts = opts.clone();
    opts.query.feedback = crate::query::Feedback::RASL;
    direct_over(graph, question, evidence, &opts, Some(llm), Some(&ids), trace, started, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords_and_rankings_parse_or_fail_clearly() {
        assert_eq!(parse_keywords("```json\n[\"clients\", \"gender\"]\n```").unwrap(), vec!["clients", "gender"]);
        assert!(parse_keywords("clients, gender").unwrap_err().to_string().contains("not a JSON list"));
        assert!(parse_keywords("[]").is_err());
        let offered = vec!["CLIENT".to_string(), "DATACENTER".to_string()];
        let a = "<thinking>x</thinking><relevant_tables><database name=\"ddo\">\
                 <table rank=\"2\">DATACENTER</table><table rank=\"1\">ddo.client</table>\
                 <table rank=\"3\">NOPE</table></database></relevant_tables>";
        assert_eq!(parse_ranking(a, &offered).unwrap(), vec!["CLIENT", "DATACENTER"]);
        assert!(parse_ranking("CLIENT", &offered).unwrap_err().to_string().contains("none of the offered"));
    }
}
