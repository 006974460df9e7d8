//! Name hints for QueryView (`--name-hints on`, issue 23): the phrases of
//! the question that name one view column, shown to the model as
//! `"claim number": Claim_Company_Claim_Number`.
//!
//! A small model reads "by claim number" and writes `Claim_Claim_Identifier`
//! although the view has `Claim_Company_Claim_Number`; the grammar forces
//! *some* view column, not the one the question names. This matches the
//! question's own words against the view's names, without the LLM:
//!
//! - **Phrases**: maximal runs of consecutive question words that are not
//!   stop words (retrieval's list, [`super::retrieve::tokens`], but for the
//!   words names are made of: [`NAME_WORDS`]); punctuation ends a run.
//!   Every span of 2 to [`MAX_SPAN`] words of a run is a phrase, longest
//!   first; a span inside one that already named a column is not tried.
//! - **A column's words**: the words of its view alias (instance prefix and
//!   column name, split on `_` and camel case), of its table column's name
//!   and of each synonym the model gives the column; stemmed
//!   ([`super::retrieve::stem`]), with `id`/`identifier`/`ident`,
//!   `number`/`num`/`nbr` and `desc`/`description` each read as one word.
//! - **A match**: every word of the phrase is a word of the column, and the
//!   phrase spells the column's name or one of its synonyms: it holds
//!   every word of that name that is not a word of the column's table, and
//!   there is one (`close date` spells `Claim.Claim_Close_Date`;
//!   `claim date` spells no column of `Claim`; `retention bonus` does not
//!   spell the key `BONUS.retention_id`); a name made of its table's words
//!   only (`car_makers.Maker`) is spelled by no phrase, which would name
//!   the table, not the column. Among the matching columns the ones with the fewest alias
//!   words the phrase leaves unused win (`loss payment amount` names
//!   `Claim_Amount_Loss_Payment_Claim_Amount`, not
//!   `Loss_Payment_Claim_Amount_Identifier`); a phrase whose best columns
//!   number more than [`MAX_COLUMNS`] is ambiguous and not shown.
//!
//! The hints add lines to the prompt, never a constraint: the grammar and
//! the guard are unchanged.

use std::collections::BTreeSet;

use crate::graph::SchemaGraph;
use crate::model::resolve::words;
use crate::types::ViewColumn;

use super::retrieve::{stem, tokens};

/// Words retrieval drops as too common in questions that are nonetheless
/// parts of column names ("claim number", "client name").
pub const NAME_WORDS: &[&str] = &["name", "number", "count", "total", "list"];

/// A question word a phrase may hold.
fn is_content(word: &str) -> bool {
    !tokens(word).is_empty() || NAME_WORDS.contains(&stem(word).as_str())
}

/// Whether QueryView shows name hints when nothing says otherwise
/// (`--name-hints`): on since session 15's measurement (ACME's first 24
/// 3 → 5, DDO 12 → 13, the Spider sample's first 50 29 → 29;
/// benchmarks/results/embedded.md).
pub const DEFAULT_ON: bool = true;

/// Longest phrase tried, in words.
pub const MAX_SPAN: usize = 4;
/// A phrase that names more columns than this (at its best) is not shown.
pub const MAX_COLUMNS: usize = 2;
/// Hint lines at most.
pub const MAX_LINES: usize = 8;
/// Question words read at most: the work is words × [`MAX_SPAN`] × view
/// columns, so a pasted document does not make it unbounded.
pub const MAX_WORDS: usize = 400;

/// One phrase and the view columns (aliases) it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hint {
    /// The phrase as the question writes it.
    pub phrase: String,
    /// The aliases, in view order.
    pub aliases: Vec<String>,
    /// The question asks "by" this phrase ([`runs`]): a grouping.
    pub by: bool,
}

impl Hint {
    /// The prompt line: `"claim number": Claim_Company_Claim_Number`.
    pub fn line(&self) -> String {
        format!("\"{}\": {}", self.phrase, self.aliases.join(" or "))
    }
}

/// The words before a run that make it a grouping: "by policy number",
/// "per client name".
const BY_WORDS: &[&str] = &["by", "per"];
/// The words before "by" that make it an ordering, not a grouping
/// ("sorted by close date").
const ORDER_WORDS: &[&str] = &["order", "ordered", "sort", "sorted", "rank", "ranked", "orders", "sorts", "ranks"];
/// Words between "by" and the phrase that leave it a grouping ("by each
/// agent id", "by the claim number").
const ARTICLES: &[&str] = &["the", "a", "an", "each", "every", "their", "its"];
/// What may separate the items of one grouping list ("by claim number,
/// open date and close date").
const LIST_WORDS: &[&str] = &["and", "&"];

/// One word in the form both sides are compared in.
fn canon(word: &str) -> String {
    let s = stem(word);
    match s.as_str() {
        "identifier" | "ident" => "id".into(),
        "num" | "nbr" => "number".into(),
        "desc" => "description".into(),
        _ => s,
    }
}

/// The canonical words of a name or text ([`canon`]); one-letter words are left out.
fn word_set(text: &str) -> BTreeSet<String> {
    words(text)
        .iter()
        .filter(|w| w.chars().count() > 1 || w.chars().all(|c| c.is_ascii_digit()))
        .map(|w| canon(w))
        .collect()
}

/// What one view column answers to.
struct ColumnWords {
    alias: BTreeSet<String>,
    /// The column's name and each synonym: its words that are not words
    /// of the table's name.
    names: Vec<BTreeSet<String>>,
    /// The alias's and every name's words.
    all: BTreeSet<String>,
}

impl ColumnWords {
    /// Whether `phrase` names this column ([module docs](self)).
    fn spelled_by(&self, phrase: &BTreeSet<String>) -> bool {
        phrase.iter().all(|w| self.all.contains(w))
            && self.names.iter().any(|own| !own.is_empty() && own.is_subset(phrase))
    }
}

fn column_words(graph: &SchemaGraph, c: &ViewColumn) -> ColumnWords {
    let alias = word_set(&c.alias);
    let table = word_set(&c.table);
    let mut texts = vec![c.column.clone()];
    if let Some(t) = graph.table_id(&c.table) {
        if let Some(col) = graph.table(t).columns.iter().find(|k| k.name.eq_ignore_ascii_case(&c.column)) {
            texts.extend(col.synonyms.iter().cloned());
        }
    }
    let mut all = alias.clone();
    let names = texts
        .iter()
        .map(|text| {
            let words = word_set(text);
            all.extend(words.iter().cloned());
            words.difference(&table).cloned().collect()
        })
        .collect();
    ColumnWords { alias, names, all }
}

/// The question's runs of consecutive content words: each word as written
/// and in canonical form, and whether the question asks "by" the run: the
/// words between it and the run before are "by" or "per" (not after
/// "sorted", "ordered", "ranked"), or only commas and "and" after a run
/// asked "by" ("by claim number, open date and close date").
fn runs(question: &str) -> Vec<Run> {
    let mut b = Runs::default();
    let mut word = String::new();
    let mut seen = 0;
    for ch in question.chars() {
        if ch.is_alphanumeric() || ch == '_' || ch == '-' {
            if word.is_empty() {
                seen += 1;
                if seen > MAX_WORDS {
                    break;
                }
            }
            word.push(ch);
        } else {
            b.word(std::mem::take(&mut word));
            if !ch.is_whitespace() {
                b.end_run();
                b.gap.push(ch.to_string());
            }
        }
    }
    b.word(word);
    b.end_run();
    b.out
}

/// A question word as written and in canonical form ([`canon`]).
type Word = (String, String);

/// A run of content words and whether the question asks "by" it.
#[derive(Debug, Default)]
struct Run {
    words: Vec<Word>,
    by: bool,
}

/// [`runs`]' state: the runs so far, the current one, and what separates
/// it from the run before (words and punctuation, lowercase).
#[derive(Default)]
struct Runs {
    out: Vec<Run>,
    cur: Vec<Word>,
    gap: Vec<String>,
    /// Whether the last run ended (kept or not) was asked "by".
    last_by: bool,
    /// The last word of that run, lowercase ("sorted" in "sorted by").
    last_word: String,
}

impl Runs {
    fn word(&mut self, w: String) {
        if w.is_empty() {
            return;
        }
        if !is_content(&w) {
            self.end_run();
            self.gap.push(w.to_lowercase());
        } else {
            let c = canon(&w);
            self.cur.push((w, c));
        }
    }

    /// Ends the current run: kept when it can hold a phrase (2 words or more).
    fn end_run(&mut self) {
        if self.cur.is_empty() {
            return;
        }
        let by = self.asked_by();
        let words = std::mem::take(&mut self.cur);
        self.last_word = words.last().map(|(w, _)| w.to_lowercase()).unwrap_or_default();
        if words.len() > 1 {
            self.out.push(Run { words, by });
        }
        self.last_by = by;
        self.gap.clear();
    }

    /// Whether the gap before the current run makes it a grouping.
    fn asked_by(&self) -> bool {
        let mut g: &[String] = &self.gap;
        while let [rest @ .., last] = g {
            if !ARTICLES.contains(&last.as_str()) {
                break;
            }
            g = rest;
        }
        match g.iter().rposition(|w| BY_WORDS.contains(&w.as_str())) {
            Some(i) if i + 1 == g.len() => {
                let before = if i == 0 { self.last_word.as_str() } else { g[i - 1].as_str() };
                !ORDER_WORDS.contains(&before)
            }
            Some(_) => false,
            None => self.last_by && !g.is_empty() && g.iter().all(|w| w == "," || LIST_WORDS.contains(&w.as_str())),
        }
    }
}

/// The hints of `question` over the view's `columns` ([module docs](self)).
pub fn view_hints(graph: &SchemaGraph, question: &str, columns: &[ViewColumn]) -> Vec<Hint> {
    let cols: Vec<ColumnWords> = columns.iter().map(|c| column_words(graph, c)).collect();
    let mut out: Vec<Hint> = Vec::new();
    for Run { words: run, by } in runs(question) {
        let mut used = vec![false; run.len()];
        for len in (2..=MAX_SPAN.min(run.len())).rev() {
            for start in 0..=run.len() - len {
                if used[start..start + len].iter().any(|&u| u) {
                    continue;
                }
                let span = &run[start..start + len];
                let phrase: BTreeSet<String> = span.iter().map(|(_, c)| c.clone()).collect();
                let mut best: Option<(usize, Vec<usize>)> = None;
                for (i, cw) in cols.iter().enumerate() {
                    if !cw.spelled_by(&phrase) {
                        continue;
                    }
                    let extra = cw.alias.iter().filter(|w| !phrase.contains(*w)).count();
                    match &mut best {
                        Some((e, v)) if *e == extra => v.push(i),
                        Some((e, _)) if *e < extra => {}
                        _ => best = Some((extra, vec![i])),
                    }
                }
                let Some((_, hit)) = best else { continue };
                if hit.len() > MAX_COLUMNS {
                    continue;
                }
                used[start..start + len].iter_mut().for_each(|u| *u = true);
                let text = span.iter().map(|(w, _)| w.as_str()).collect::<Vec<_>>().join(" ");
                let aliases: Vec<String> = hit.iter().map(|&i| columns[i].alias.clone()).collect();
                if !out.iter().any(|h| h.aliases == aliases && h.phrase.eq_ignore_ascii_case(&text)) {
                    out.push(Hint { phrase: text, aliases, by: by && start == 0 });
                }
            }
        }
    }
    out.truncate(MAX_LINES);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::fixtures;

    fn vc(alias: &str, table: &str, column: &str) -> ViewColumn {
        ViewColumn { alias: alias.into(), table: table.into(), column: column.into(), description: None, note: None }
    }

    fn acme_claim_view() -> Vec<ViewColumn> {
        vec![
            vc("Policy_Policy_Identifier", "Policy", "Policy_Identifier"),
            vc("Policy_Policy_Number", "Policy", "Policy_Number"),
            vc("Claim_Claim_Identifier", "Claim", "Claim_Identifier"),
            vc("Claim_Company_Claim_Number", "Claim", "Company_Claim_Number"),
            vc("Claim_Claim_Open_Date", "Claim", "Claim_Open_Date"),
            vc("Claim_Claim_Close_Date", "Claim", "Claim_Close_Date"),
            vc("Claim_Amount_Loss_Payment_Claim_Amount", "Claim_Amount", "Claim_Amount"),
            vc("Claim_Amount_Loss_Reserve_Claim_Amount", "Claim_Amount", "Claim_Amount"),
            vc("Loss_Payment_Claim_Amount_Identifier", "Loss_Payment", "Claim_Amount_Identifier"),
            vc("Agreement_Party_Role_Party_Identifier", "Agreement_Party_Role", "Party_Identifier"),
        ]
    }

    fn lines(hints: &[Hint]) -> Vec<String> {
        hints.iter().map(Hint::line).collect()
    }

    #[test]
    fn phrases_name_the_column_they_spell() {
        let g = fixtures::acme();
        let h = view_hints(
            &g,
            "Return all the claims we have by claim number, open date and close date?",
            &acme_claim_view(),
        );
        assert_eq!(
            lines(&h),
            [
                "\"claim number\": Claim_Company_Claim_Number",
                "\"open date\": Claim_Claim_Open_Date",
                "\"close date\": Claim_Claim_Close_Date"
            ]
        );
    }

    #[test]
    fn an_instance_prefix_and_a_synonym_pick_one_of_equal_columns() {
        let g = fixtures::acme();
        let h = view_hints(&g, "What are the loss payment amounts by agent id and policy number?", &acme_claim_view());
        assert_eq!(
            lines(&h),
            [
                "\"loss payment amounts\": Claim_Amount_Loss_Payment_Claim_Amount",
                "\"agent id\": Agreement_Party_Role_Party_Identifier",
                "\"policy number\": Policy_Policy_Number"
            ]
        );
    }

    #[test]
    fn stop_words_and_punctuation_end_a_phrase() {
        let g = fixtures::acme();
        // "number of claims" is a count, not the claim number; "policy, number" is two words.
        let h = view_hints(&g, "What is the number of claims of each policy, number them", &acme_claim_view());
        assert!(h.is_empty(), "{h:?}");
    }

    #[test]
    fn a_table_word_alone_names_nothing_and_ambiguity_is_not_shown() {
        let g = fixtures::acme();
        // No column holds both words.
        assert!(view_hints(&g, "claim policy", &acme_claim_view()).is_empty());
        // Three equally good columns: ambiguous.
        let cols = vec![
            vc("A_Open_Date", "A", "Open_Date"),
            vc("B_Open_Date", "B", "Open_Date"),
            vc("C_Open_Date", "C", "Open_Date"),
        ];
        assert!(view_hints(&g, "the open date", &cols).is_empty());
        let two = &cols[..2];
        assert_eq!(lines(&view_hints(&g, "the open date", two)), ["\"open date\": A_Open_Date or B_Open_Date"]);
    }

    #[test]
    fn a_phrase_must_spell_the_whole_name_but_its_table_words() {
        let g = fixtures::ddo();
        let cols = vec![
            vc("BONUS_retention_id", "BONUS", "retention_id"),
            vc("BONUS_amount", "BONUS", "amount"),
            vc("RETENTION_strategy", "RETENTION", "strategy"),
        ];
        // "retention bonus" lacks the key's "id"; "bonus amount" spells BONUS.amount.
        assert_eq!(
            lines(&view_hints(&g, "What is the total retention bonus amount per client?", &cols)),
            ["\"bonus amount\": BONUS_amount"]
        );
        let g = fixtures::acme();
        // The synonym is "policy holder ID": without the id it names nothing.
        assert!(view_hints(&g, "the policy holder", &acme_claim_view()).is_empty());
        assert_eq!(
            lines(&view_hints(&g, "by policy holder id", &acme_claim_view())),
            ["\"policy holder id\": Agreement_Party_Role_Party_Identifier"]
        );
    }

    #[test]
    fn a_phrase_that_names_the_table_names_no_column() {
        let g = fixtures::ddo();
        let cols = vec![vc("car_makers_Id", "car_makers", "Id"), vc("car_makers_Maker", "car_makers", "Maker")];
        assert!(view_hints(&g, "How many car makers are there in france?", &cols).is_empty());
    }

    #[test]
    fn a_long_question_is_read_up_to_its_word_bound() {
        let g = fixtures::ddo();
        let cols = vec![vc("CLIENT_name", "CLIENT", "name")];
        let long = format!("{} client name", "word ".repeat(MAX_WORDS));
        assert!(view_hints(&g, &long, &cols).is_empty());
        let short = format!("{} client name", "word ".repeat(MAX_WORDS - 2));
        assert_eq!(lines(&view_hints(&g, &short, &cols)), ["\"client name\": CLIENT_name"]);
    }

    fn grouped(hints: &[Hint]) -> Vec<String> {
        hints.iter().filter(|h| h.by).map(|h| h.phrase.clone()).collect()
    }

    #[test]
    fn by_and_per_make_a_grouping_list() {
        let g = fixtures::acme();
        let v = acme_claim_view();
        let h = view_hints(&g, "Return all the claims we have by claim number, open date and close date?", &v);
        assert_eq!(grouped(&h), ["claim number", "open date", "close date"]);
        let h = view_hints(&g, "What are the loss payment amounts by agent id and policy number?", &v);
        assert_eq!(grouped(&h), ["agent id", "policy number"]);
        assert_eq!(grouped(&view_hints(&g, "the total loss per each policy number", &v)), ["policy number"]);
        // Sorting is not grouping; a list ends at any other word.
        assert!(grouped(&view_hints(&g, "claims sorted by close date", &v)).is_empty());
        assert!(grouped(&view_hints(&g, "claims ordered by the close date", &v)).is_empty());
        let h = view_hints(&g, "the claims by claim number where the open date is recent", &v);
        assert_eq!(grouped(&h), ["claim number"]);
        assert_eq!(h.len(), 2);
        // "by" far before the phrase does not count.
        assert!(grouped(&view_hints(&g, "paid by agents with a close date", &v)).is_empty());
    }

    #[test]
    fn ddo_names() {
        let g = fixtures::ddo();
        let cols = vec![vc("CLIENT_name", "CLIENT", "name"), vc("DATACENTER_name", "DATACENTER", "name")];
        assert_eq!(
            lines(&view_hints(&g, "Which datacenter name hosts each client name?", &cols)),
            ["\"datacenter name\": DATACENTER_name", "\"client name\": CLIENT_name"]
        );
    }
}
