//! Verification questions about role instances (`--verify-roles N`, issue
//! 23 item 4): after a table's role question (`match_roles`), each role
//! instance the vote kept although fewer than half the samples named it
//! (the paper's any-sample vote keeps it) gets one yes/no `verify_role`
//! prompt — the table, the way in described in the model's words, the
//! other ways, and the question last — sampled and voted like
//! `verify_table` ([`super::verify::yes_no`]). An instance the vote says no
//! to is dropped; the last kept role instance never is. At most N questions
//! per table's role question, least named first. The subtype question of
//! an exclusive pattern root (one instance per kind, `ROOT@CHILD`) is a
//! role question too: its kinds are asked about the same way. Off (0, the
//! default), no prompt changes.

use serde_json::json;

use super::{context, MatchOptions};
use crate::error::Result;
use crate::graph::{RelId, SchemaGraph, TableId};
use crate::llm::ChatModel;
use crate::prompts::Prompts;
use crate::types::trace::MatchTrace;

/// One instance of a table that a role question offered: the relationship
/// that makes it, and how it joins in the model's words (the line the role
/// question showed).
#[derive(Debug, Clone, PartialEq)]
pub struct Offered {
    pub rel: RelId,
    pub text: String,
}

/// The `verify_role` variables of the instance `asked` of `t`, among the
/// `offered` ones; `subtypes` when they are an exclusive root's kinds.
pub fn prompt_vars(
    graph: &SchemaGraph,
    question: &str,
    t: TableId,
    asked: &Offered,
    offered: &[Offered],
    subtypes: bool,
) -> serde_json::Value {
    let line = |o: &Offered| json!({"label": graph.instance_label(t, Some(o.rel)), "text": o.text});
    let others: Vec<serde_json::Value> = offered.iter().filter(|o| o.rel != asked.rel).map(line).collect();
    json!({
        "table": graph.name(t),
        "summary": context::table_summary(graph, t, false),
        "label": graph.instance_label(t, Some(asked.rel)),
        "text": asked.text,
        "others": others,
        "subtypes": subtypes,
        "question": question,
    })
}

/// `--verify-roles N` over table `t`'s role question (`subtypes`: its
/// subtype question) that offered `offered`: `kept` (the vote's instances,
/// `None` the plain one) without the role instances the verification said
/// no to. The votes are read from the trace's last
/// `match_roles` step about `t`; each question is a `verify_role` step,
/// and a warning names every instance dropped. Off (0) returns `kept`.
#[allow(clippy::too_many_arguments)]
pub fn narrow(
    graph: &SchemaGraph,
    question: &str,
    t: TableId,
    offered: &[Offered],
    subtypes: bool,
    kept: Vec<Option<RelId>>,
    opts: &MatchOptions,
    llm: &dyn ChatModel,
    prompts: &Prompts,
    trace: &mut MatchTrace,
) -> Result<Vec<Option<RelId>>> {
    if opts.verify_roles == 0 {
        return Ok(kept);
    }
    let name = graph.name(t);
    let Some(step) = trace.steps.iter().rev().find(|s| s.prompt == "match_roles" && s.subject.as_deref() == Some(name))
    else {
        return Ok(kept);
    };
    let samples = step.samples.len();
    // Each offered role instance's votes, in vote order.
    let votes: Vec<(RelId, usize)> = step
        .votes
        .iter()
        .filter_map(|v| {
            let o = offered.iter().find(|o| graph.instance_label(t, Some(o.rel)) == v.item)?;
            Some((o.rel, v.votes))
        })
        .collect();
    let roles: Vec<RelId> = kept.iter().flatten().copied().collect();
    let ask = super::verify::minority(&votes, &roles, samples, opts.verify_roles);
    let mut dropped = Vec::new();
    for r in ask {
        let Some(asked) = offered.iter().find(|o| o.rel == r) else { continue };
        let label = graph.instance_label(t, Some(r));
        let prompt = prompts.render("verify_role", prompt_vars(graph, question, t, asked, offered, subtypes))?;
        if !super::verify::yes_no("verify_role", &label, prompt, opts, llm, trace)? {
            let n = votes.iter().find(|(x, _)| *x == r).map_or(0, |&(_, v)| v);
            dropped.push((r, format!("{label} ({n} of {samples})")));
        }
    }
    if !dropped.is_empty() {
        let list: Vec<&str> = dropped.iter().map(|(_, s)| s.as_str()).collect();
        trace.warnings.push(format!(
            "--verify-roles: dropped {}: named by fewer than half the samples, and the verification said no",
            list.join(", ")
        ));
    }
    Ok(kept.into_iter().filter(|k| !dropped.iter().any(|(r, _)| *k == Some(*r))).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::fixtures::ddo;
    use crate::link::verify::minority;

    #[test]
    fn minority_roles_are_asked_least_named_first_and_never_all() {
        // The tables' rule, over role instances (`verify::minority`).
        let (a, b, c): (RelId, RelId, RelId) = (1, 2, 3);
        let votes = [(c, 5), (b, 2), (a, 1)];
        assert_eq!(minority(&votes, &[a, b, c], 5, 8), [a, b]);
        assert_eq!(minority(&votes, &[a, b, c], 5, 1), [a]);
        // Every kept role a minority: the most named stays out of the question.
        assert_eq!(minority(&votes, &[a, b], 5, 8), [a]);
        assert!(minority(&votes, &[c], 5, 8).is_empty());
        // With one sample nothing is a minority.
        assert!(minority(&votes, &[a, b, c], 1, 8).is_empty());
    }

    #[test]
    fn the_prompt_describes_the_way_in_and_names_the_others() {
        let g = ddo();
        let loc = g.table_id("LOCATION").unwrap();
        let relevant = [g.table_id("CLIENT").unwrap(), g.table_id("DATACENTER").unwrap()];
        let ways = crate::link::roles::ways_in(&g, loc, &relevant);
        assert_eq!(ways.len(), 2);
        let offered: Vec<Offered> =
            ways.iter().map(|&w| Offered { rel: w.rel, text: crate::link::roles::describe(&g, loc, w) }).collect();
        let v = prompt_vars(&g, "Where are the clients based?", loc, &offered[0], &offered, false);
        let text = Prompts::embedded().render("verify_role", v.clone()).unwrap();
        assert!(text.contains(v["label"].as_str().unwrap()), "{text}");
        assert!(text.contains("LOCATION joined to CLIENT"), "{text}");
        assert!(text.contains(v["others"][0]["label"].as_str().unwrap()), "{text}");
        assert!(text.trim_end().ends_with("Where are the clients based?"), "the question comes last:\n{text}");
        // A subtype question's kinds are asked about as kinds.
        let v = prompt_vars(&g, "Where are the clients based?", loc, &offered[0], &offered, true);
        let kinds = Prompts::embedded().render("verify_role", v).unwrap();
        assert!(kinds.contains("exactly one of several kinds") && kinds.contains("The other kinds:"), "{kinds}");
        assert!(!text.contains("kinds"), "{text}");
    }
}
