//! Core tables the question names word for word (`--table-names`, on by
//! default since session 17; issue 23), read without the LLM, and the table
//! a question counts (`--count-names`, [`counted`]).
//!
//! The 1.5B model, asked to list a 15-table schema's relevant core tables,
//! leaves out tables the question spells: "How many policies have agents
//! sold by agent id?" gets `Agreement_Party_Role`, `Agreement` and `Party`
//! but never `Policy`. A core table whose name or one of whose synonyms
//! the question holds (stemmed words in a row) joins the relevant tables
//! the vote kept, and is then explored like them (its role question and
//! attribute prompt).
//!
//! Only a name whose every word counts is read: `car_names` spells "car"
//! once its stop word "names" is dropped, and "cars" does not name that
//! table (Spider's `car_1`, where "cars" means `cars_data`).

use crate::graph::{SchemaGraph, TableId};

use crate::model::resolve::words;

use super::retrieve::{stem, tokens};

/// Whether MatchTables keeps the core tables the question names by default
/// (`--table-names`): on since session 17, when with the other defaults of
/// that session it gained on the Spider sample (306: `Documents` joined)
/// and lost on no suite (session 16's recordings; DDO 13 → 13, ACME's first
/// 24 unchanged; benchmarks/results/embedded.md).
pub const DEFAULT_ON: bool = true;

/// Question words read at most ([`super::hints::MAX_WORDS`]'s bound): the
/// work is words × core tables × names, so a pasted document stays bounded.
pub const MAX_WORDS: usize = super::hints::MAX_WORDS;

/// The core tables of `core` that `relevant` lacks and whose name or one of
/// whose synonyms the question holds word for word ([`spelling`]), in
/// `core`'s order. Only the first [`MAX_WORDS`] words are read.
pub fn core_tables(graph: &SchemaGraph, question: &str, core: &[TableId], relevant: &[TableId]) -> Vec<TableId> {
    let q: Vec<String> = tokens(question).into_iter().take(MAX_WORDS).collect();
    core.iter()
        .copied()
        .filter(|t| !relevant.contains(t))
        .filter(|&t| {
            let table = graph.table(t);
            std::iter::once(&table.name)
                .chain(&table.synonyms)
                .filter_map(|name| spelling(name))
                .any(|phrase| holds(&q, &phrase))
        })
        .collect()
}

/// The stemmed words of `name` when every word of it counts (no stop word,
/// digit or one-letter word dropped by [`tokens`]); `None` otherwise.
pub fn spelling(name: &str) -> Option<Vec<String>> {
    let all = words(name);
    let kept = tokens(name);
    (!kept.is_empty() && kept.len() == all.len() && kept.iter().zip(&all).all(|(k, w)| *k == stem(w))).then_some(kept)
}

/// Whether `phrase` (non-empty) occurs in `words` as consecutive words.
pub fn holds(words: &[String], phrase: &[String]) -> bool {
    !phrase.is_empty() && words.windows(phrase.len()).any(|w| w == phrase)
}

/// Words that ask for a count: "how many X", "the number of X", "count
/// (the) X".
const COUNTING: &[&[&str]] = &[&["how", "many"], &["number", "of"], &["count"]];

/// Words allowed between the counting words and the counted name.
const BEFORE_COUNTED: &[&str] = &["the", "all", "of", "different", "distinct", "unique", "total"];

/// The table of `tables` the question counts (`--count-names on`): the
/// name or a synonym spelled word for word ([`spelling`]) right after "how
/// many", "number of" or "count" (articles and "different" allowed
/// between): "find the number of players for each country" → `players`.
/// The longest name wins; `None` when nothing is counted by name, or two
/// counts name different tables. Only the first [`MAX_WORDS`] words are
/// read.
pub fn counted(graph: &SchemaGraph, question: &str, tables: &[TableId]) -> Option<TableId> {
    let raw: Vec<String> = words(question).into_iter().take(MAX_WORDS).map(|w| w.to_lowercase()).collect();
    let stemmed: Vec<String> = raw.iter().map(|w| stem(w)).collect();
    let names: Vec<(TableId, Vec<String>)> = tables
        .iter()
        .flat_map(|&t| {
            let table = graph.table(t);
            std::iter::once(&table.name).chain(&table.synonyms).filter_map(move |n| spelling(n).map(|p| (t, p)))
        })
        .collect();
    let starts =
        |at: usize, phrase: &[&str]| phrase.iter().enumerate().all(|(k, w)| raw.get(at + k).is_some_and(|x| x == w));
    let mut found: Option<TableId> = None;
    let mut i = 0;
    while i < raw.len() {
        let Some(trigger) = COUNTING.iter().find(|c| starts(i, c)) else {
            i += 1;
            continue;
        };
        let mut at = i + trigger.len();
        while at < raw.len() && BEFORE_COUNTED.contains(&raw[at].as_str()) {
            at += 1;
        }
        let best =
            names.iter().filter(|(_, p)| stemmed[at..].starts_with(p)).max_by_key(|(_, p)| p.len()).map(|(t, _)| *t);
        if let Some(t) = best {
            if found.is_some_and(|f| f != t) {
                return None;
            }
            found = Some(t);
        }
        i = at.max(i + 1);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::graph::fixtures::{acme, ddo};

    fn ids(g: &SchemaGraph, names: &[&str]) -> Vec<TableId> {
        names.iter().map(|n| g.table_id(n).unwrap()).collect()
    }

    fn names(g: &SchemaGraph, ts: &[TableId]) -> Vec<String> {
        ts.iter().map(|&t| g.name(t).to_string()).collect()
    }

    #[test]
    fn a_core_table_the_question_spells_is_found() {
        let g = acme();
        let core = ids(&g, &["Policy", "Agreement", "Agreement_Party_Role", "Party", "Claim"]);
        let relevant = ids(&g, &["Agreement_Party_Role", "Agreement", "Party"]);
        let q = "How many policies have agents sold by agent id?";
        assert_eq!(names(&g, &core_tables(&g, q, &core, &relevant)), ["Policy"]);
        // Already relevant: nothing to add.
        assert!(core_tables(&g, q, &core, &ids(&g, &["Policy", "Agreement_Party_Role"])).is_empty());
        // A synonym counts: "policy holders" is Agreement_Party_Role's.
        let q = "What are all the premiums that have been paid by policy holders?";
        assert_eq!(names(&g, &core_tables(&g, q, &core, &ids(&g, &["Party"]))), ["Policy", "Agreement_Party_Role"]);
        // Words out of order or apart do not spell a name.
        assert!(core_tables(&g, "Which claims were paid?", &ids(&g, &["Policy"]), &[]).is_empty());
    }

    #[test]
    fn only_names_whose_every_word_counts_are_read() {
        assert_eq!(spelling("Policy"), Some(vec!["policy".to_string()]));
        assert_eq!(spelling("Agreement_Party_Role"), Some(vec!["agreement".into(), "party".into(), "role".into()]));
        assert_eq!(spelling("policy holder"), Some(vec!["policy".into(), "holder".into()]));
        // "names" is a stop word: "car" alone would read every "cars".
        assert_eq!(spelling("car_names"), None);
        assert_eq!(spelling("RSPOOL2CLIENT"), None);
        assert_eq!(spelling("the"), None);
        assert_eq!(spelling(""), None);
    }

    #[test]
    fn a_long_question_is_read_up_to_its_word_bound() {
        let g = acme();
        let core = ids(&g, &["Policy"]);
        let long = format!("{} policies", "claim ".repeat(MAX_WORDS));
        assert!(core_tables(&g, &long, &core, &[]).is_empty());
        let short = format!("{} policies", "claim ".repeat(MAX_WORDS - 1));
        assert_eq!(names(&g, &core_tables(&g, &short, &core, &[])), ["Policy"]);
    }

    #[test]
    fn ddo_tables_spelled_in_its_questions() {
        let g = ddo();
        let core = g.core_tables();
        let q = "What is the average tax rate applied to payments of female clients?";
        let found = names(&g, &core_tables(&g, q, &core, &[]));
        assert!(found.contains(&"CLIENT".to_string()), "{found:?}");
    }

    #[test]
    fn the_table_a_question_counts() {
        let g = acme();
        let all = ids(&g, &["Policy", "Agreement_Party_Role", "Claim", "Party"]);
        let one = |q: &str| counted(&g, q, &all).map(|t| g.name(t).to_string());
        assert_eq!(one("How many policies have agents sold by agent id?").as_deref(), Some("Policy"));
        assert_eq!(one("Find the number of claims for each policy").as_deref(), Some("Claim"));
        assert_eq!(one("Count the different policy holders").as_deref(), Some("Agreement_Party_Role"));
        // Counting something that is no table's name, or not counting.
        assert_eq!(one("How many times was a claim made?"), None);
        assert_eq!(one("List the claims of each policy"), None);
        // Two counts of different tables: no single answer.
        assert_eq!(one("How many claims and how many policies are there?"), None);
        assert_eq!(one("How many claims, and the number of claims per policy?").as_deref(), Some("Claim"));
        // Only the tables offered are read.
        assert_eq!(counted(&g, "How many policies are there?", &ids(&g, &["Claim"])), None);
    }
}
