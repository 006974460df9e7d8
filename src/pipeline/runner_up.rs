//! The runner-up table set for the execution vote (`--exec-vote K
//! --runner-up on`, issue 23 item 6): where MatchTables was uncertain, the
//! one other set of relevant tables it came closest to choosing. QueryView
//! then samples over both views and the vote counts every candidate (ties
//! go to the top view's: see `query::choose`). No LLM call here.
//!
//! MatchTables is *uncertain* about a core table when its samples split on
//! it. The runner-up set changes exactly one such table, the first of:
//! 1. **drop** the kept core table fewest samples named, when fewer than
//!    half named it (the paper's any-sample vote keeps it) and the question
//!    does not name it word for word (`link::named::core_tables`), and
//!    another relevant table remains; the tables its pattern step chose
//!    below it, its columns and its role instances go with it;
//! 2. **add** the core table most samples named of those the vote did not
//!    keep (`--min-votes`, `--max-items`, `--core-votes majority`).
//!
//! A question whose samples agree (every kept table named by at least half
//! of them, none named but left out) has no runner-up. Nor has one asked
//! with a single sample, or with given tables.

use crate::graph::{SchemaGraph, TableId};
use crate::types::trace::MatchTrace;
use crate::types::Relevance;

/// The runner-up set and what changed from the top one.
#[derive(Debug, Clone, PartialEq)]
pub struct RunnerUp {
    pub relevance: Relevance,
    /// What differs, for the trace: `without RETENTION (1 of 5 samples
    /// named it)` or `with PAYMENT (2 of 5 samples named it; not kept)`.
    pub change: String,
}

/// The runner-up of `found` (the top set) from MatchTables' trace `mt`, or
/// `None` when the samples agree (module doc).
pub fn runner_up(graph: &SchemaGraph, question: &str, mt: &MatchTrace, found: &Relevance) -> Option<RunnerUp> {
    let step = mt.listing_step()?;
    let n = step.samples.len();
    if n < 2 {
        return None;
    }
    let id = |name: &str| graph.table_id(name);
    // 1. The least-named minority table the vote kept.
    let named = crate::link::named::core_tables(graph, question, &found.tables, &[]);
    let drop = step
        .votes
        .iter()
        .filter(|v| v.kept && 2 * v.votes < n)
        .filter_map(|v| Some((v, id(&v.item)?)))
        .filter(|(_, t)| found.tables.contains(t) && !named.contains(t))
        .min_by_key(|(v, _)| v.votes);
    if let Some((v, t)) = drop {
        let below: Vec<TableId> = mt
            .steps
            .iter()
            .filter(|s| s.prompt == "pattern_children" && s.subject.as_deref() == Some(v.item.as_str()))
            .flat_map(|s| s.tables.iter().filter_map(|n| id(n)))
            .collect();
        let gone = |x: &TableId| *x == t || below.contains(x);
        let relevance = Relevance {
            tables: found.tables.iter().copied().filter(|x| !gone(x)).collect(),
            columns: found.columns.iter().copied().filter(|c| !gone(&c.table)).collect(),
            roles: found.roles.iter().copied().filter(|r| !gone(&r.table)).collect(),
        };
        if !relevance.tables.is_empty() || !relevance.roles.is_empty() {
            let change = format!("without {} ({} of {n} samples named it)", v.item, v.votes);
            return Some(RunnerUp { relevance, change });
        }
    }
    // 2. The most-named table the vote left out.
    let (v, t) = step
        .votes
        .iter()
        .filter(|v| !v.kept && v.votes > 0)
        .filter_map(|v| Some((v, id(&v.item)?)))
        .filter(|(_, t)| !found.tables.contains(t))
        .max_by(|(a, _), (b, _)| a.votes.cmp(&b.votes).then(std::cmp::Ordering::Greater))?;
    let mut relevance = found.clone();
    relevance.add_table(t);
    let change = format!("with {} ({} of {n} samples named it; not kept)", v.item, v.votes);
    Some(RunnerUp { relevance, change })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::trace::{ListStep, Vote};

    use crate::graph::fixtures::ddo;

    fn trace(samples: usize, votes: &[(&str, usize, bool)]) -> MatchTrace {
        let step = ListStep {
            prompt: "match_tables".into(),
            samples: vec![Vec::new(); samples],
            votes: votes.iter().map(|&(item, votes, kept)| Vote { item: item.into(), votes, kept }).collect(),
            ..ListStep::default()
        };
        MatchTrace { steps: vec![step], ..MatchTrace::default() }
    }

    fn rel(g: &SchemaGraph, tables: &[&str]) -> Relevance {
        let mut r = Relevance::default();
        for t in tables {
            r.add_table(g.table_id(t).unwrap());
        }
        r
    }

    fn names(g: &SchemaGraph, r: &Relevance) -> Vec<String> {
        r.tables.iter().map(|&t| g.name(t).to_string()).collect()
    }

    #[test]
    fn drops_the_least_named_minority_table() {
        let g = ddo();
        let mt = trace(5, &[("CLIENT", 5, true), ("DATACENTER", 2, true), ("RETENTION", 1, true)]);
        let found = rel(&g, &["CLIENT", "DATACENTER", "RETENTION"]);
        let r = runner_up(&g, "list the clients and their data centers", &mt, &found).unwrap();
        assert_eq!(names(&g, &r.relevance), ["CLIENT", "DATACENTER"]);
        assert_eq!(r.change, "without RETENTION (1 of 5 samples named it)");
    }

    #[test]
    fn never_drops_a_table_the_question_names() {
        let g = ddo();
        let mt = trace(5, &[("CLIENT", 5, true), ("DATACENTER", 1, true)]);
        let found = rel(&g, &["CLIENT", "DATACENTER"]);
        assert_eq!(runner_up(&g, "list each client's datacenter", &mt, &found), None);
    }

    #[test]
    fn agreeing_samples_have_no_runner_up() {
        let g = ddo();
        let mt = trace(5, &[("CLIENT", 5, true), ("DATACENTER", 3, true)]);
        let found = rel(&g, &["CLIENT", "DATACENTER"]);
        assert_eq!(runner_up(&g, "which clients pay the most", &mt, &found), None);
        let one = trace(1, &[("CLIENT", 1, true), ("DATACENTER", 0, true)]);
        assert_eq!(runner_up(&g, "which clients pay the most", &one, &found), None);
    }

    #[test]
    fn the_last_table_is_never_dropped_and_a_left_out_table_is_added() {
        let g = ddo();
        // The only relevant table is a minority one: nothing to drop; the
        // most-named left-out table is added instead (ties: the first).
        let mt = trace(5, &[("CLIENT", 2, true), ("PAYMENT", 2, false), ("DATACENTER", 2, false)]);
        let found = rel(&g, &["CLIENT"]);
        let r = runner_up(&g, "what do they owe", &mt, &found).unwrap();
        assert_eq!(names(&g, &r.relevance), ["CLIENT", "PAYMENT"]);
        assert_eq!(r.change, "with PAYMENT (2 of 5 samples named it; not kept)");
    }

    #[test]
    fn the_tables_chosen_below_a_dropped_root_go_with_it() {
        let g = ddo();
        let mut mt = trace(5, &[("CLIENT", 5, true), ("RESOURCEPOOL", 1, true)]);
        mt.steps.push(ListStep {
            prompt: "pattern_children".into(),
            subject: Some("RESOURCEPOOL".into()),
            tables: vec!["RCPU".into()],
            ..ListStep::default()
        });
        let found = rel(&g, &["CLIENT", "RESOURCEPOOL", "RCPU"]);
        let r = runner_up(&g, "how much do clients pay", &mt, &found).unwrap();
        assert_eq!(names(&g, &r.relevance), ["CLIENT"]);
    }
}
