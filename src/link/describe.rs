//! PROMPTD (Lucy, Appendix E.3.2): a very brief description of a table, for
//! models whose tables have none — MatchTables shows descriptions in every
//! prompt, so filling them in helps the LLM pick tables.

use crate::error::{Error, Result};
use crate::graph::{SchemaGraph, TableId};
use crate::llm::traced;
use crate::llm::{ChatModel, ChatRequest};
use crate::prompts::Prompts;
use crate::types::trace::LlmCall;

/// Word limit the paper uses.
pub const DEFAULT_MAX_WORDS: usize = 15;

/// Ask for a description of table `t` of at most `max_words` words. The
/// answer is cleaned (one line, no quotes or "Description:" label) and cut
/// at `max_words` words; the call is returned for traces.
pub fn describe_table(
    graph: &SchemaGraph,
    t: TableId,
    max_words: usize,
    llm: &dyn ChatModel,
    prompts: &Prompts,
) -> Result<(String, LlmCall)> {
    let table = graph.table(t);
    let columns: Vec<serde_json::Value> = table
        .columns
        .iter()
        .map(|c| serde_json::json!({"name": c.name, "type": c.sql_type, "description": c.description.clone().unwrap_or_default()}))
        .collect();
    let vars = serde_json::json!({"table": table.name, "columns": columns, "max_words": max_words});
    let req = ChatRequest::greedy("describe_table", prompts.render("describe_table", &vars)?);
    let (call, result) = traced::call(llm, &req);
    let answer = result?.choices.into_iter().next().unwrap_or_default();
    let text = clean_description(&answer, max_words);
    if text.is_empty() {
        return Err(Error::llm("describe_table", format!("no description of {} in the answer {answer:?}", table.name)));
    }
    Ok((text, call))
}

fn clean_description(answer: &str, max_words: usize) -> String {
    let line = answer.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    let line = line.strip_prefix("Description:").unwrap_or(line).trim();
    let line = line.trim_matches(|c: char| matches!(c, '"' | '\'' | '`' | '*')).trim();
    let words: Vec<&str> = line.split_whitespace().collect();
    if words.len() <= max_words {
        return words.join(" ");
    }
    let mut cut = words[..max_words].join(" ");
    cut = cut.trim_end_matches([',', ';', ':']).to_string();
    if !cut.ends_with('.') {
        cut.push('.');
    }
    cut
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::fake::FakeChat;

    #[test]
    fn describes_and_cleans() {
        let m = crate::model::load(concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json")).unwrap();
        let g = SchemaGraph::new(m).unwrap();
        let chat = FakeChat::new().on(
            &["brief description of the CCPU table", "overheadlimit, INTEGER, CPU overhead limit in MHz."],
            &["Description: \"CPU allocation settings of resource pool configurations.\"\nHope this helps!"],
        );
        let (d, call) = describe_table(&g, g.table_id("CCPU").unwrap(), 15, &chat, &Prompts::embedded()).unwrap();
        assert_eq!(d, "CPU allocation settings of resource pool configurations.");
        assert_eq!(call.phase, "describe_table");
        assert_eq!(clean_description("one two three four, five six", 4), "one two three four.");
        let chat = FakeChat::new().on(&["CCPU"], &["   "]);
        assert!(describe_table(&g, g.table_id("CCPU").unwrap(), 15, &chat, &Prompts::embedded()).is_err());
    }
}
