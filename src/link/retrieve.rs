//! The words of a question or a schema text worth matching: split
//! ([`words`]), lightly stemmed ([`stem`]), stop words dropped ([`tokens`]).
//! The name hints, the named tables and kinds, and the lookup filters read
//! them. (Candidate retrieval for MatchTables, which ranked tables by these
//! words, by MiniLM embeddings and by values, was measured off with its
//! verification and deleted in session 26: `benchmarks/results/embedded.md`.)

use crate::model::resolve::words;

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
