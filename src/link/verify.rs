//! Verification questions for MatchTables (issue #23, item 4): a small
//! model that lists tables poorly can still say yes or no about one
//! described table. After the first prompt's vote, [`widen`] asks one
//! short yes/no prompt (`verify_table`) for each uncertain one — named by
//! some sample but not kept — at most `--verify N` per question.
//! Each prompt is sampled like every MatchTables prompt and voted: a table
//! passes when more usable samples say yes than no ([`tally`]). Tables
//! that pass join the relevant core tables and are explored like the
//! others (roles, attributes). Unusable answers count for neither side and
//! are reported; all unusable is a "no".
//!
//! [`narrow`] (`--prune N`) asks the same question the other way round:
//! about each table the vote kept although fewer than half the samples
//! named it (the paper keeps every table any sample names), least named
//! first, at most N per question; a table the vote says no to is dropped.
//! The last table is never dropped.

use serde_json::json;

use super::values::ValueMatch;
use super::{context, MatchOptions};
use crate::error::{Error, Result};
use crate::graph::{SchemaGraph, TableId};
use crate::llm::traced;
use crate::llm::{ChatModel, ChatRequest, Message};
use crate::prompts::Prompts;
use crate::types::trace::{ListStep, MatchTrace, Vote};

/// The Lark grammar of a verification answer.
pub const YES_NO_GRAMMAR: &str = "start: \"yes\" | \"no\"";

/// Tokens a verification answer may use (a grammar-constrained answer
/// needs one; a free-text backend's "Yes." a few).
const MAX_TOKENS: u32 = 8;

/// One sample's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Yes,
    No,
    /// Neither: empty, or a first word that is not yes/no.
    Unusable,
}

/// Read one answer: its first word, case and punctuation aside (`Yes.`,
/// `"no"`, `**YES**, because…`). Anything else is [`Answer::Unusable`].
pub fn parse_answer(text: &str) -> Answer {
    let first = text.split_whitespace().next().unwrap_or("");
    let word: String = first.chars().filter(|c| c.is_alphanumeric()).collect::<String>().to_lowercase();
    match word.as_str() {
        "yes" | "y" | "true" => Answer::Yes,
        "no" | "n" | "false" => Answer::No,
        _ => Answer::Unusable,
    }
}

/// The vote over one prompt's samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Verdict {
    pub yes: usize,
    pub no: usize,
    pub unusable: usize,
}

impl Verdict {
    /// Whether the table joins: more yes than no among the usable answers.
    pub fn pass(&self) -> bool {
        self.yes > self.no
    }
}

/// Count the answers.
pub fn tally(answers: &[String]) -> Verdict {
    let mut v = Verdict::default();
    for a in answers {
        match parse_answer(a) {
            Answer::Yes => v.yes += 1,
            Answer::No => v.no += 1,
            Answer::Unusable => v.unusable += 1,
        }
    }
    v
}

/// The uncertain tables, in the order they are asked about: `named` (named
/// by some sample but not kept, in vote order) without the `kept` ones, at
/// most `max`.
pub fn uncertain(kept: &[TableId], named: &[TableId], max: usize) -> Vec<TableId> {
    let mut out: Vec<TableId> = Vec::new();
    for &t in named {
        if out.len() >= max {
            break;
        }
        if !kept.contains(&t) && !out.contains(&t) {
            out.push(t);
        }
    }
    out
}

/// The kept tables fewer than half of
/// `samples` named (`votes`: each named item and its votes), least named
/// first (ties in vote order), at most `max`, and never every kept item.
pub fn minority<T: Copy + PartialEq>(votes: &[(T, usize)], kept: &[T], samples: usize, max: usize) -> Vec<T> {
    let mut few: Vec<(T, usize)> =
        votes.iter().copied().filter(|&(t, v)| kept.contains(&t) && 2 * v < samples).collect();
    few.sort_by_key(|&(_, v)| v);
    let mut out: Vec<T> = few.into_iter().map(|(t, _)| t).take(max).collect();
    if out.len() >= kept.len() {
        // Keep the most named of them out of the question.
        out.truncate(kept.len().saturating_sub(1));
    }
    out
}

/// `--prune N`: ask the verification question about the tables the first
/// prompt's vote kept although fewer than half the samples named them
/// ([`minority`]) and drop those the vote says no to (in the trace: each
/// question's step, and a warning naming every table dropped). Off (0),
/// returns `kept` unchanged and records nothing.
#[allow(clippy::too_many_arguments)]
pub fn narrow(
    graph: &SchemaGraph,
    question: &str,
    kept: Vec<TableId>,
    opts: &MatchOptions,
    llm: &dyn ChatModel,
    prompts: &Prompts,
    trace: &mut MatchTrace,
) -> Result<Vec<TableId>> {
    if opts.prune == 0 {
        return Ok(kept);
    }
    let votes: Vec<(TableId, usize)> = trace
        .listing_step()
        .map(|s| s.votes.iter().filter_map(|v| Some((graph.table_id(&v.item)?, v.votes))).collect())
        .unwrap_or_default();
    let ask = minority(&votes, &kept, opts.samples, opts.prune);
    let passed = ask_all(graph, question, &ask, opts, llm, prompts, trace)?;
    let dropped: Vec<TableId> = ask.iter().zip(&passed).filter(|(_, &p)| !p).map(|(&t, _)| t).collect();
    if !dropped.is_empty() {
        let named = |t: TableId| votes.iter().find(|(x, _)| *x == t).map_or(0, |&(_, v)| v);
        let list: Vec<String> =
            dropped.iter().map(|&t| format!("{} ({} of {})", graph.name(t), named(t), opts.samples)).collect();
        trace.warnings.push(format!(
            "--prune: dropped {}: named by fewer than half the samples, and the verification said no",
            list.join(", ")
        ));
    }
    Ok(kept.into_iter().filter(|t| !dropped.contains(t)).collect())
}

/// Ask the verification question of each table of `ask`, concurrently
/// (the LLM client bounds the requests in flight), each into its own
/// trace, merged in the order asked so that traces do not depend on
/// timing; whether each passed, in that order. The first LLM error ends
/// the phase.
fn ask_all(
    graph: &SchemaGraph,
    question: &str,
    ask: &[TableId],
    opts: &MatchOptions,
    llm: &dyn ChatModel,
    prompts: &Prompts,
    trace: &mut MatchTrace,
) -> Result<Vec<bool>> {
    let parts: Vec<(MatchTrace, Result<bool>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = ask
            .iter()
            .map(|&t| {
                scope.spawn(move || {
                    let mut part = MatchTrace::default();
                    let r = verify_table(graph, question, t, opts, llm, prompts, &mut part);
                    (part, r)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    (MatchTrace::default(), Err(Error::llm("verify_table", "a verification worker panicked")))
                })
            })
            .collect()
    });
    let mut out = Vec::with_capacity(ask.len());
    let mut first_err = None;
    for (part, r) in parts {
        super::merge(trace, part);
        match r {
            Ok(p) => out.push(p),
            Err(e) => {
                first_err.get_or_insert(e);
                out.push(false);
            }
        }
    }
    first_err.map_or(Ok(out), Err)
}

/// After the first prompt kept `kept`: with `--verify N`, ask about the
/// uncertain tables and return `kept` with those that passed appended (in
/// the order asked; the questions run concurrently). Off (the default),
/// returns `kept` unchanged and records nothing.
pub fn widen(
    graph: &SchemaGraph,
    question: &str,
    kept: Vec<TableId>,
    opts: &MatchOptions,
    llm: &dyn ChatModel,
    prompts: &Prompts,
    trace: &mut MatchTrace,
) -> Result<Vec<TableId>> {
    if opts.verify == 0 {
        return Ok(kept);
    }
    // Named by some sample of the first prompt but not kept, in vote order.
    let named: Vec<TableId> = trace
        .listing_step()
        .map(|s| s.votes.iter().filter(|v| !v.kept).filter_map(|v| graph.table_id(&v.item)).collect())
        .unwrap_or_default();
    let ask = uncertain(&kept, &named, opts.verify);
    let passed = ask_all(graph, question, &ask, opts, llm, prompts, trace)?;
    let mut out = kept;
    out.extend(ask.iter().zip(&passed).filter(|(_, &p)| p).map(|(&t, _)| t));
    Ok(out)
}

/// The lines naming the question's matched `values` in table `t`'s
/// columns (`Party_Role_Code: 'AG' = Agent`) and, qualified, in the tables
/// below it in its pattern (`Party_Role.Party_Role_Name: 'Agent'`): what
/// the value index says the table holds of the question's words.
pub fn value_lines(graph: &SchemaGraph, values: &[ValueMatch], t: TableId) -> Vec<String> {
    let mut out = super::values::table_notes(graph, values, t);
    for below in super::context::subtree(graph, t) {
        let name = graph.name(below);
        out.extend(super::values::table_notes(graph, values, below).into_iter().map(|l| format!("{name}.{l}")));
    }
    out.truncate(MAX_VALUE_LINES);
    out
}

/// Most value lines one verification prompt shows.
const MAX_VALUE_LINES: usize = 6;

/// The `verify_table` variables of table `t`; `values` are the question's
/// matches in the value index (`--values on`; empty otherwise, and the
/// prompt is then the one recorded before values reached it).
pub fn prompt_vars(graph: &SchemaGraph, question: &str, t: TableId, values: &[ValueMatch]) -> serde_json::Value {
    let table = graph.table(t);
    let columns: Vec<serde_json::Value> = table
        .columns
        .iter()
        .map(|c| {
            let mut text = c.description.as_deref().map(str::trim).unwrap_or("").to_string();
            if !c.synonyms.is_empty() {
                if !text.is_empty() {
                    text.push(' ');
                }
                text.push_str(&format!("(also: {})", c.synonyms.join(", ")));
            }
            json!({"name": c.name, "text": text})
        })
        .collect();
    json!({
        "table": table.name,
        "summary": context::table_summary(graph, t, true),
        "synonyms": table.synonyms.join(", "),
        "columns": columns,
        "values": value_lines(graph, values, t),
        "question": question,
    })
}

/// Ask the verification question of table `t` `samples` times and vote;
/// record a [`ListStep`] (prompt `verify_table`, candidates `yes`/`no`,
/// the table in `tables` when it passed). An LLM error ends the phase as
/// every prompt's does; unusable answers are warnings.
pub fn verify_table(
    graph: &SchemaGraph,
    question: &str,
    t: TableId,
    opts: &MatchOptions,
    llm: &dyn ChatModel,
    prompts: &Prompts,
    trace: &mut MatchTrace,
) -> Result<bool> {
    let prompt = prompts.render("verify_table", prompt_vars(graph, question, t, &opts.values))?;
    yes_no("verify_table", graph.name(t), prompt, opts, llm, trace)
}

/// Ask a rendered yes/no `prompt` (template `phase`) about `subject` (a
/// table, or a role instance's label) `samples` times, grammar-constrained
/// to yes/no, and vote ([`tally`]); record a [`ListStep`] (candidates
/// `yes`/`no`, `subject` in `tables` when it passed). An LLM error ends the
/// phase as every prompt's does; unusable answers are warnings.
pub(crate) fn yes_no(
    phase: &str,
    subject: &str,
    prompt: String,
    opts: &MatchOptions,
    llm: &dyn ChatModel,
    trace: &mut MatchTrace,
) -> Result<bool> {
    let req = ChatRequest {
        phase: phase.into(),
        messages: vec![Message::user(prompt)],
        temperature: opts.temperature,
        n: opts.samples,
        response_schema: None,
        grammar: Some(YES_NO_GRAMMAR.into()),
        max_tokens: Some(MAX_TOKENS),
    };
    let (call, result) = traced::call(llm, &req);
    trace.cost.add_call(&call);
    let mut step = ListStep {
        prompt: phase.into(),
        subject: Some(subject.to_string()),
        candidates: vec!["yes".into(), "no".into()],
        call,
        min_votes: 1,
        ..ListStep::default()
    };
    let resp = match result {
        Ok(r) => r,
        Err(e) => {
            trace.steps.push(step);
            return Err(e);
        }
    };
    let v = tally(&resp.choices);
    step.samples = resp
        .choices
        .iter()
        .map(|a| match parse_answer(a) {
            Answer::Yes => vec!["yes".to_string()],
            Answer::No => vec!["no".to_string()],
            Answer::Unusable => Vec::new(),
        })
        .collect();
    let pass = v.pass();
    step.votes = vec![
        Vote { item: "yes".into(), votes: v.yes, kept: pass },
        Vote { item: "no".into(), votes: v.no, kept: !pass },
    ];
    if resp.choices.len() < opts.samples {
        step.warnings.push(format!("asked for {} samples, got {}", opts.samples, resp.choices.len()));
    }
    if v.unusable > 0 {
        let bad: Vec<String> = resp
            .choices
            .iter()
            .enumerate()
            .filter(|(_, a)| parse_answer(a) == Answer::Unusable)
            .map(|(k, _)| (k + 1).to_string())
            .collect();
        step.warnings.push(format!(
            "verification of {subject}: sample(s) {} answered neither yes nor no{}",
            bad.join(", "),
            if v.yes + v.no == 0 { "; counted as no" } else { "" }
        ));
    }
    if pass {
        step.tables.push(subject.to_string());
    }
    trace.steps.push(step);
    Ok(pass)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prompt_shows_the_values_the_table_holds_and_is_unchanged_without() {
        let g = crate::graph::fixtures::ddo();
        let pool = g.table_id("RESOURCEPOOL").unwrap();
        let rcpu = g.table_id("RCPU").unwrap();
        let dc = g.table_id("DATACENTER").unwrap();
        let col = g.table(rcpu).columns.len() - 1;
        let m = ValueMatch {
            column: crate::types::ColumnId { table: rcpu, column: col },
            value: "high".into(),
            kind: crate::link::values::MatchKind::Exact,
            score: 1.0,
            matched: "high".into(),
            means: None,
        };
        let col_name = &g.table(rcpu).columns[col].name;
        assert_eq!(value_lines(&g, std::slice::from_ref(&m), pool), [format!("RCPU.{col_name}: 'high'")]);
        assert!(value_lines(&g, std::slice::from_ref(&m), dc).is_empty());
        let p = Prompts::embedded();
        let q = "Which pools run high?";
        let with = p.render("verify_table", prompt_vars(&g, q, pool, std::slice::from_ref(&m))).unwrap();
        assert!(
            with.contains(&format!(
                "\nValues of the user's question that this table holds:\n- RCPU.{col_name}: 'high'\n"
            )),
            "{with}"
        );
        let without = p.render("verify_table", prompt_vars(&g, q, pool, &[])).unwrap();
        assert!(!without.contains("Values of"));
        // Without values the text is the one before values could reach it:
        // the last column's line, a blank line, then the question.
        assert!(without.contains("(COMPUTE.id).\n\nIs the table RESOURCEPOOL needed"), "{without}");
        let block = format!("Values of the user's question that this table holds:\n- RCPU.{col_name}: 'high'\n\n");
        assert_eq!(with.replace(&block, ""), without);
    }

    #[test]
    fn answers_parse_by_their_first_word() {
        for (s, a) in [
            ("yes", Answer::Yes),
            ("Yes.", Answer::Yes),
            ("  \"YES\" because it links them", Answer::Yes),
            ("**no**", Answer::No),
            ("No, the question does not need it", Answer::No),
            ("", Answer::Unusable),
            ("maybe", Answer::Unusable),
            ("yesterday", Answer::Unusable),
            ("[\"CLIENT\"]", Answer::Unusable),
            ("\u{0}\u{202e}", Answer::Unusable),
        ] {
            assert_eq!(parse_answer(s), a, "{s:?}");
        }
    }

    #[test]
    fn the_vote_needs_more_yes_than_no_and_garbage_is_no() {
        let v = |xs: &[&str]| tally(&xs.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert!(v(&["yes", "no", "yes"]).pass());
        assert!(!v(&["yes", "no"]).pass());
        assert!(v(&["yes", "???", "???"]).pass());
        let all_bad = v(&["???", "", "I think so"]);
        assert_eq!(all_bad, Verdict { yes: 0, no: 0, unusable: 3 });
        assert!(!all_bad.pass());
        assert!(!v(&[]).pass());
    }

    #[test]
    fn minority_tables_are_the_kept_ones_fewer_than_half_named_least_first() {
        // Five samples: 1 and 2 votes are a minority, 3 is not.
        let votes = [(1, 5), (2, 1), (3, 2), (4, 3), (5, 1)];
        assert_eq!(minority(&votes, &[1, 2, 3, 4, 5], 5, 8), [2, 5, 3]);
        assert_eq!(minority(&votes, &[1, 2, 3, 4, 5], 5, 2), [2, 5]);
        // Not kept (e.g. --max-items): not asked.
        assert_eq!(minority(&votes, &[1, 3], 5, 8), [3]);
        // Never every kept table: the most named stays out of the question.
        assert_eq!(minority(&[(2, 1), (3, 2)], &[2, 3], 5, 8), [2]);
        assert!(minority(&[(2, 1)], &[2], 5, 8).is_empty());
        // One sample: nothing is a minority.
        assert!(minority(&[(1, 1), (2, 1)], &[1, 2], 1, 8).is_empty());
        assert!(minority(&votes, &[1, 2, 3], 5, 0).is_empty());
    }

    #[test]
    fn uncertain_tables_are_named_ones_not_kept_bounded() {
        assert_eq!(uncertain(&[1], &[4, 1, 2, 4, 3, 5], 3), [4, 2, 3]);
        assert_eq!(uncertain(&[1], &[1, 2], 6), [2]);
        assert!(uncertain(&[1], &[2], 0).is_empty());
    }
}
