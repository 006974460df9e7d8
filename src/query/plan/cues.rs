//! What a question's words allow a plan to hold (issue 46): a 1.5B model
//! filling a plan adds clauses the question never asked for (a count over
//! a listed column, `order_by` and `limit` copied from the prompt's
//! example), so the plan grammar offers a clause only when the question
//! has a word that can ask for it. The word lists are generous on purpose:
//! a cue that is there lets the model choose; only a question with none of
//! them loses the clause. English only; [`Cues::ALL`] turns every clause
//! on (a question in another language should use the `sql` form).
//!
//! - aggregates (`count` … `max`, `having`, `count_of`): "how many", "number
//!   of", "count", "total", "sum", "average", "mean", "max…", "min…",
//!   "most", "least", "more than", "at least", a superlative ("-est"), …
//! - `order_by`: an ordering word ("order", "sort", "rank", "first",
//!   "last", "top", "ascending", …), a superlative, or "most"/"least".
//! - `limit` and `top_per_group`: a superlative, "top", "first", "most",
//!   "least", "single", or a number (digits or a number word).
//! - `without`: a negation ("no", "not", "never", "without", "none", …).

use serde::Serialize;

/// The clauses a question's words allow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Cues {
    /// Aggregates, HAVING and `count_of`.
    pub aggregate: bool,
    /// ORDER BY.
    pub order: bool,
    /// LIMIT and `top_per_group`.
    pub limit: bool,
    /// The `without` kind.
    pub without: bool,
    /// Arithmetic between columns or aggregates ("the sum of loss payment
    /// and expense payment", "plus", "ratio", "percentage"): a plan cannot
    /// say it, so `auto` asks for free SQL at once.
    pub arithmetic: bool,
    /// The row with the largest or smallest something ("the car with the
    /// greatest accelerate", "the most common hometown", "the oldest
    /// player"): a superlative, "most" or "least" not in an ordering phrase
    /// ("most clients first"). Free SQL answers these better than a plan
    /// (the Spider sample, session 28), so `auto` asks for SQL at once.
    pub argmax: bool,
    /// A subquery or a set operation: rows that have both of two things
    /// ("students who have both cats and dogs", "concerts in both 2014 and
    /// 2015": an intersection; not "show both the name and the age", a
    /// display verb before it), or a comparison with a whole set ("larger
    /// than any country in Africa", "above the average"). A plan cannot
    /// say either, so `auto` asks for free SQL at once.
    pub subquery: bool,
    /// Rows per year, month or day of a date ("payments in each month",
    /// "per year", "monthly", "the month as YYYY-MM"): a select item may
    /// cut a date column to that part (`bucket`).
    pub bucket: bool,
}

/// Words (or word stems, see [`Cues::of`]) that can ask for an aggregate.
const AGGREGATE: &[&str] = &[
    "how many",
    "how much",
    "number of",
    "numbers of",
    "count",
    "counts",
    "counted",
    "total",
    "totals",
    "totally",
    "sum",
    "sums",
    "summed",
    "average",
    "averages",
    "avg",
    "mean",
    "median",
    "max",
    "maximum",
    "maximal",
    "min",
    "minimum",
    "minimal",
    "most",
    "fewest",
    "overall",
    "aggregate",
    "aggregated",
    "altogether",
    "combined",
    "per",
    "each",
    "every",
    "percentage",
    "percent",
    "share",
    "ratio",
    "proportion",
    "times",
    "twice",
    "several",
    "multiple",
    "majority",
];

/// Comparisons that ask for a count when a number and a noun follow
/// ("at least 2 payments"), not when a bare number does ("a reservation
/// of at least 4096").
const COMPARED: &[&str] = &["more than", "less than", "fewer than", "at least", "at most", "exactly", "over", "under"];

/// Number words (for [`COMPARED`] and the limit cue).
const NUMBER_WORDS: &[&str] =
    &["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "twenty", "hundred", "dozen"];

/// Words that can ask for an order.
const ORDER: &[&str] = &[
    "order",
    "ordered",
    "ordering",
    "sort",
    "sorted",
    "sorting",
    "rank",
    "ranked",
    "ranking",
    "first",
    "last",
    "top",
    "bottom",
    "ascending",
    "descending",
    "alphabetical",
    "alphabetically",
    "chronological",
    "chronologically",
    "most",
    "least",
    "fewest",
    "max",
    "maximum",
    "min",
    "minimum",
    "earliest",
    "latest",
    "newest",
    "oldest",
    "recent",
    "highest",
    "lowest",
    "greatest",
    "smallest",
    "largest",
    "biggest",
    "best",
    "worst",
    "then",
];

/// Words that can ask for a bounded number of rows.
const LIMIT: &[&str] = &[
    "top", "first", "last", "most", "least", "fewest", "single", "max", "maximum", "min", "minimum", "one", "two",
    "three", "four", "five", "six", "seven", "eight", "nine", "ten", "twenty", "hundred", "dozen", "only",
];

/// Words that ask for arithmetic.
const ARITHMETIC: &[&str] = &[
    "plus",
    "minus",
    "difference between",
    "ratio",
    "divided by",
    "multiplied",
    "percentage",
    "percent",
    "per cent",
    "proportion",
    "subtract",
    "subtracted",
    "added to",
];

/// Words that can ask for rows without a match.
const WITHOUT: &[&str] = &[
    "no",
    "not",
    "never",
    "without",
    "none",
    "nobody",
    "nothing",
    "neither",
    "nor",
    "lack",
    "lacks",
    "lacking",
    "missing",
    "haven't",
    "hasn't",
    "don't",
    "doesn't",
    "didn't",
    "isn't",
    "aren't",
    "wasn't",
    "weren't",
    "unused",
    "zero",
    "except",
    "excluding",
    "other than",
];

/// Whether `w` (lower case) is a superlative: "-est" past five letters
/// ("largest", "oldest"; nouns like "interest" too: they only allow).
pub fn superlative(w: &str) -> bool {
    w.len() > 5 && w.ends_with("est")
}

/// Whether `w` (lower case) ranks: a superlative, "most", "least", "fewest".
pub fn ranked(w: &str) -> bool {
    matches!(w, "most" | "least" | "fewest") || superlative(w)
}

/// The words of `lower` (a lower-case question): letters, digits and
/// inner apostrophes ("haven't"), surrounding quotes trimmed.
fn cue_words(lower: &str) -> Vec<&str> {
    lower
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .map(|w| w.trim_matches('\''))
        .filter(|w| !w.is_empty())
        .collect()
}

/// The numbers `question` compares a count with: a [`COMPARED`] phrase,
/// a number (digits or a number word) and a word after it ("more than one
/// orchestra" → 1, "at least 2 payments" → 2), in the question's order.
pub fn compared_counts(question: &str) -> Vec<f64> {
    let lower = question.to_lowercase();
    let words = cue_words(&lower);
    let value = |w: &str| -> Option<f64> {
        if w.chars().all(|c| c.is_ascii_digit()) {
            return w.parse().ok();
        }
        const VALUES: [f64; 13] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 20.0, 100.0, 12.0];
        NUMBER_WORDS.iter().position(|x| *x == w).map(|i| VALUES[i])
    };
    let mut out = Vec::new();
    for phrase in COMPARED {
        let n = phrase.split(' ').count();
        for w in words.windows(n + 2) {
            if w[..n].join(" ") == *phrase && w[n + 1].chars().all(|c| c.is_alphabetic()) {
                out.extend(value(w[n]));
            }
        }
    }
    out
}

impl Cues {
    /// Every clause allowed.
    pub const ALL: Cues = Cues {
        aggregate: true,
        order: true,
        limit: true,
        without: true,
        arithmetic: false,
        argmax: false,
        subquery: false,
        bucket: true,
    };

    /// The clauses `question`'s words allow. A word matches whole (case
    /// and surrounding punctuation ignored); a superlative ("-est", not
    /// "-est" nouns the lists cannot tell apart: both allow) counts for
    /// aggregates, order and limit; digits count for limit.
    pub fn of(question: &str) -> Cues {
        let lower = question.to_lowercase();
        let words = cue_words(&lower);
        let joined = format!(" {} ", words.join(" "));
        let has = |list: &[&str]| list.iter().any(|w| joined.contains(&format!(" {w} ")));
        let superlative = words.iter().any(|w| superlative(w));
        let digits = words.iter().any(|w| w.chars().all(|c| c.is_ascii_digit()));
        let compared_count = !compared_counts(question).is_empty();
        // "the sum of A, B and C": a sum of several things, not of one column.
        let sum_of_many = lower.split(['.', '?', '!', ';']).any(|s| {
            s.find("sum of").is_some_and(|i| {
                let rest = &s[i + 6..];
                rest.contains(',') || rest.contains(" and ")
            })
        });
        let argmax = words
            .iter()
            .enumerate()
            .any(|(i, w)| ranked(w) && !words[i + 1..].iter().take(3).any(|x| matches!(*x, "first" | "last")));
        const DISPLAY: &[&str] = &["show", "list", "give", "return", "display", "output", "print", "find", "get"];
        let both = words.iter().enumerate().any(|(i, w)| {
            *w == "both"
                && words[i + 1..].iter().take(6).any(|x| *x == "and")
                && !(i > 0 && DISPLAY.contains(&words[i - 1]))
        });
        const VERSUS_SET: &[&str] = &[
            "than any",
            "than all",
            "than every",
            "than the average",
            "than average",
            "above average",
            "below average",
            "above the average",
            "below the average",
        ];
        const PERIODS: &[&str] = &["year", "years", "month", "months", "day", "days"];
        const PER: &[&str] = &["each", "per", "every", "by"];
        let bucket = words
            .iter()
            .enumerate()
            .any(|(i, w)| PER.contains(w) && words[i + 1..].iter().take(2).any(|x| PERIODS.contains(x)))
            || words.iter().any(|w| matches!(*w, "monthly" | "yearly" | "annual" | "annually" | "daily" | "yyyy"));
        Cues {
            argmax,
            bucket,
            subquery: both || has(VERSUS_SET),
            arithmetic: has(ARITHMETIC) || sum_of_many || lower.contains(" + ") || lower.contains(" - "),
            aggregate: has(AGGREGATE) || superlative || compared_count,
            order: has(ORDER) || superlative,
            limit: has(LIMIT) || superlative || digits,
            without: has(WITHOUT),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A question with no cue at all.
    const NO_CUE: Cues = Cues {
        aggregate: false,
        order: false,
        limit: false,
        without: false,
        arithmetic: false,
        argmax: false,
        subquery: false,
        bucket: false,
    };

    #[test]
    fn a_listing_question_allows_no_aggregate_order_or_limit() {
        let c = Cues::of(
            "List customers who use datacenters with names starting with 'dev'. Output clients and datacenters names.",
        );
        assert_eq!(c, NO_CUE);
        let c = Cues::of("Which resource pools does the client 'Juniper Labs' use? Output the resource pool names.");
        assert!(!c.aggregate && !c.order && !c.limit);
    }

    #[test]
    fn counting_ranking_and_negation_words_allow_their_clauses() {
        let c = Cues::of("How many distinct clients does each datacenter serve?");
        assert!(c.aggregate && !c.order && !c.limit);
        let c = Cues::of("Which 3 clients paid the largest amounts?");
        assert!(c.aggregate && c.order && c.limit);
        let c = Cues::of("What is the total income amount per income source?");
        assert!(c.aggregate);
        let c = Cues::of("Which clients never made a payment?");
        assert!(c.without && !c.aggregate);
        let c = Cues::of("Clients that don't use any pool");
        assert!(c.without);
        let c = Cues::of("Show the cheapest product");
        assert!(c.aggregate && c.order && c.limit);
        let c = Cues::of("List pools sorted by name");
        assert!(c.order && !c.limit && !c.aggregate);
        // A count compared with a number, not a value.
        assert!(Cues::of("Clients with at least 2 payments").aggregate);
        assert!(Cues::of("Clients with more than three pools").aggregate);
        assert!(!Cues::of("List resource pools whose memory reservation is at least 4096.").aggregate);
    }

    #[test]
    fn arithmetic_is_a_sum_of_several_things_or_an_operator_word() {
        assert!(
            Cues::of(
                "What is the average loss where loss is the sum of loss payment, loss reserve and expense payment?"
            )
            .arithmetic
        );
        assert!(Cues::of("How much was paid (loss payments plus expense payments)?").arithmetic);
        assert!(Cues::of("What percentage of clients are female?").arithmetic);
        assert!(!Cues::of("What is the sum of the payments per client?").arithmetic);
        assert!(!Cues::of("What is the total income per source?").arithmetic);
    }

    #[test]
    fn both_of_two_things_and_a_set_compared_need_a_subquery() {
        assert!(Cues::of("Find the first name of students who have both cat and dog pets.").subquery);
        assert!(Cues::of("Which stadiums had concerts in both 2014 and 2015?").subquery);
        assert!(!Cues::of("Show both the name and the age of each singer.").subquery);
        assert!(!Cues::of("Which clients use both pools?").subquery);
        assert!(
            Cues::of("Which Asian countries have a population that is larger than any country in Africa?").subquery
        );
        assert!(Cues::of("Pools whose usage is above the average.").subquery);
        assert!(!Cues::of("Pools whose usage is above 100.").subquery);
    }

    #[test]
    fn a_count_compared_with_a_number_before_a_noun_is_found() {
        assert_eq!(compared_counts("Conductors who have conducted at more than one orchestra?"), vec![1.0]);
        assert_eq!(compared_counts("clients with at least 2 payments and at most three pools"), vec![2.0, 3.0]);
        // A bare number (a value, not a count of things): none.
        assert!(compared_counts("a reservation of at least 4096").is_empty());
        assert!(compared_counts("Which clients pay the most?").is_empty());
    }

    #[test]
    fn a_period_after_each_or_per_cuts_dates() {
        for q in [
            "How many payments were made in each month of 2024? Output the month as YYYY-MM.",
            "Total income per year",
            "Monthly revenue by datacenter",
            "Payments by month",
        ] {
            assert!(Cues::of(q).bucket, "{q}");
        }
        for q in
            ["Payments made in May 2024", "How many days did the runtime last?", "each client's first payment date"]
        {
            assert!(!Cues::of(q).bucket, "{q}");
        }
    }

    #[test]
    fn words_match_whole_not_inside_other_words() {
        // "total" inside "totalitarian", "no" inside "note", "one" inside "phone".
        let c = Cues::of("Give the note and phone of the totalitarian regimes");
        assert_eq!(c, NO_CUE);
    }
}
