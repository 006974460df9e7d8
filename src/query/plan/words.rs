//! What a question's words say, for the plan's tidying rules
//! ([`super::tidy`]): its words and phrases, whether it asks to see a count
//! or a measure, a grouping, a direction, the numbers it holds and how it
//! qualifies them, its output sentence and the order that sentence names
//! a plan's items in.

use super::ast::{Agg, Item, Op};

/// Lower-case words of `s`.
pub(super) fn words(s: &str) -> Vec<String> {
    s.to_lowercase()
        .split(|c: char| !c.is_alphanumeric() && c != '.')
        .map(|w| w.trim_matches('.').to_string())
        .filter(|w| !w.is_empty())
        .collect()
}

/// Words that ask for a grouping when a column's name follows them.
pub(super) const GROUPING: &[&str] =
    &["each", "per", "every", "by", "group", "grouped", "breakdown", "respective", "respectively", "across"];

/// Whether the question asks to see a count ("how many", "number of",
/// "count", "times"), not only to compare one.
pub(super) fn asks_count(question: &str) -> bool {
    has_phrase(question, &["how many", "number of", "count", "counts", "times"])
}

/// Whether the question asks to see a count or a measure ([`asks_count`],
/// "total", "average", "maximum", …), not only to compare one.
pub(super) fn asks_measure(question: &str) -> bool {
    asks_count(question) || has_phrase(question, &["how much", "total", "sum", "average", "mean", "maximum", "minimum"])
}

/// Whether one of `phrases` is in the question's words.
pub(super) fn has_phrase(question: &str, phrases: &[&str]) -> bool {
    let joined = format!(" {} ", words(question).join(" "));
    phrases.iter().any(|w| joined.contains(&format!(" {w} ")))
}

/// Whether a grouping word of `question` is followed, within three words,
/// by a word naming one of `group_by`'s columns ("each document" for
/// `Documents_Document_ID`; not "caused each time" for
/// `death_caused_by_ship_id`). "respective(ly)" and "breakdown" group by
/// whatever is shown, so they keep any group.
pub(super) fn groups_by(question: &str, group_by: &[String]) -> bool {
    let qw = words(question);
    qw.iter().enumerate().any(|(i, w)| {
        if matches!(w.as_str(), "respective" | "respectively" | "breakdown") {
            return true;
        }
        // "each of them", "each one": whatever the question is about.
        let back =
            matches!(qw.get(i + 1).map(String::as_str), Some("one")) || qw[i + 1..].iter().take(2).any(|x| x == "them");
        GROUPING.contains(&w.as_str())
            && (back || qw[i + 1..].iter().take(3).any(|x| group_by.iter().any(|g| names_column(x, g))))
    })
}

/// The item a "by"/"per"/"each" phrase names ("by policy number"): the one
/// with the most of the three words after it naming it, when one has more
/// than any other.
pub(super) fn by_key(items: &[Item], question: &str) -> Option<usize> {
    let qw = words(question);
    let mut best: Option<(usize, usize)> = None;
    let mut tie = false;
    for (i, w) in qw.iter().enumerate() {
        if !matches!(w.as_str(), "by" | "per" | "each") {
            continue;
        }
        for (k, it) in items.iter().enumerate() {
            let Some(c) = it.col.as_deref() else { continue };
            let score = qw[i + 1..].iter().take(3).filter(|x| names_column(x, c)).count();
            match best {
                _ if score == 0 => {}
                Some((_, b)) if score < b => {}
                Some((bk, b)) if score == b => tie |= bk != k,
                _ => {
                    best = Some((k, score));
                    tie = false;
                }
            }
        }
    }
    best.filter(|_| !tie).map(|(k, _)| k)
}

/// Whether the question word `w` names the column `alias`: it shares its
/// first five letters (or the whole of a shorter word) with one of the
/// alias's words of three letters or more, `id` aside.
pub(super) fn names_column(w: &str, alias: &str) -> bool {
    if w.len() < 3 {
        return false;
    }
    alias.split('_').map(str::to_lowercase).filter(|a| a.len() >= 3 && a != "id").any(|a| starts_alike(&a, w))
}

/// Whether two lower-case words start alike: their first five letters, or
/// the whole of the shorter one ("client" and "clients", "templ…").
pub(super) fn starts_alike(a: &str, b: &str) -> bool {
    let n = a.len().min(b.len()).min(5);
    a.as_bytes()[..n] == b.as_bytes()[..n]
}

/// Words that ask for a direction of an order (a ranking word aside, see
/// [`super::cues::ranked`]).
pub(super) const DIRECTION: &[&str] = &[
    "descending",
    "descend",
    "decreasing",
    "desc",
    "reverse",
    "reversed",
    "high",
    "higher",
    "top",
    "best",
    "worst",
    "latest",
    "newest",
    "recent",
    "oldest",
    "youngest",
    "more",
    "less",
    "max",
    "maximum",
    "min",
    "minimum",
];

/// Whether the question asks for an order's direction at all: a ranking
/// word ("most", a superlative) or a [`DIRECTION`] word. Without one,
/// "sorted by birth date" is ascending, as SQL's ORDER BY is.
pub(super) fn asks_direction(question: &str) -> bool {
    words(question).iter().any(|w| super::cues::ranked(w) || DIRECTION.contains(&w.as_str()))
}

/// Whether the question's words name `table` (a word starting with its
/// first 4 to 6 letters: "clients" for CLIENT).
pub(super) fn names_table(question: &str, table: &str) -> bool {
    let t = table.to_lowercase();
    if t.len() < 3 || !t.chars().all(|c| c.is_alphabetic()) {
        return false;
    }
    let stem: String = t.chars().take(t.len().clamp(3, 6)).collect();
    words(question).iter().any(|w| w.starts_with(&stem))
}

/// A number's spellings in a question: its digits, and its word up to twenty.
pub(super) fn spellings(n: &serde_json::Number) -> Vec<String> {
    const WORDS: [&str; 21] = [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
        "twenty",
    ];
    let mut out = vec![n.to_string()];
    if let Some(i) = n.as_u64().filter(|&i| i <= 20) {
        out.push(WORDS[i as usize].to_string());
        if i == 1 {
            out.extend(["single", "once", "first"].map(String::from));
        }
    }
    if let Some(f) = n.as_f64() {
        if f.fract() == 0.0 {
            out.push(format!("{}", f as i64));
        }
    }
    out
}

/// Whether the question's words `qw` hold the number `n` in one of its
/// [`spellings`].
pub(super) fn number_held(n: &serde_json::Number, qw: &[String]) -> bool {
    spellings(n).iter().any(|s| qw.contains(s))
}

/// Whether the question's words `qw` say the text literal `t`: a word of
/// `t` of three letters or more starts like a question word (their first
/// five letters, or the whole shorter word). A number written as text of
/// three digits or more must be in the question. Any other literal without
/// such a word (`'F'`, `'AG'`, `'42'`) cannot be judged and counts as said:
/// codes come from the value notes and the descriptions, not the
/// question's words.
pub(super) fn text_held(t: &str, qw: &[String]) -> bool {
    // A number written as text ("12312701", a description's example): held
    // only when the question holds it.
    let digits = t.trim();
    if digits.len() >= 3 && digits.chars().all(|c| c.is_ascii_digit()) {
        return qw.iter().any(|q| q == digits);
    }
    let tw: Vec<String> =
        words(t).into_iter().filter(|w| w.chars().filter(|c| c.is_alphabetic()).count() >= 3).collect();
    tw.is_empty() || tw.iter().any(|w| qw.iter().any(|q| q.len() >= 3 && starts_alike(w, q)))
}

/// The op a question's words give a comparison with `n`, if any.
pub(super) fn qualified_op(question: &str, n: &serde_json::Number) -> Option<Op> {
    let qw = words(question);
    let sp = spellings(n);
    let phrases: [(&[&str], Op); 8] = [
        (&["at", "least"], Op::Ge),
        (&["no", "fewer", "than"], Op::Ge),
        (&["more", "than"], Op::Gt),
        (&["greater", "than"], Op::Gt),
        (&["over"], Op::Gt),
        (&["at", "most"], Op::Le),
        (&["fewer", "than"], Op::Lt),
        (&["less", "than"], Op::Lt),
    ];
    for (ph, op) in phrases {
        let k = ph.len();
        if qw.windows(k + 1).any(|w| w[..k].iter().zip(ph.iter()).all(|(a, b)| a == b) && sp.contains(&w[k])) {
            return Some(op);
        }
    }
    // "3 or more", "3 or fewer".
    for (tail, op) in [("more", Op::Ge), ("fewer", Op::Le), ("less", Op::Le)] {
        if qw.windows(3).any(|w| sp.contains(&w[0]) && w[1] == "or" && w[2] == tail) {
            return Some(op);
        }
    }
    None
}

/// The question's last output sentence ("output the datacenter name and
/// …"), from `lower` (the question in lower case).
pub(super) fn output_sentence(lower: &str) -> Option<&str> {
    lower
        .split(['.', '?', '!', ';', '\n'])
        .map(str::trim)
        .rfind(|s| s.split_whitespace().next().is_some_and(|w| OUTPUT_VERBS.contains(&w.trim_matches(':'))))
}

/// How many things the question's output sentence ("Output the policy
/// number, the number of periods and the average premium.") lists, when it
/// has one: its parts between commas and "and", ordering phrases ("most
/// clients first", "in calendar order") left out. `None` without such a
/// sentence.
pub fn output_items(question: &str) -> Option<usize> {
    let lower = question.to_lowercase();
    let sentence = output_sentence(&lower)?;
    let body = sentence.split_once(char::is_whitespace).map(|(_, rest)| rest).unwrap_or("");
    const ORDERING: &[&str] = &["order", "ordered", "sorted", "descending", "ascending"];
    let ordering = |p: &str| {
        let ws: Vec<&str> = p.split_whitespace().collect();
        let ranked = ws.iter().any(|w| super::cues::ranked(w));
        ws.iter().any(|w| ORDERING.contains(w)) || (ranked && matches!(ws.last(), Some(&"first") | Some(&"last")))
    };
    let n =
        body.split(',').flat_map(|p| p.split(" and ")).map(str::trim).filter(|p| !p.is_empty() && !ordering(p)).count();
    (n > 0).then_some(n)
}

/// Verbs that open a question's output sentence.
pub(super) const OUTPUT_VERBS: &[&str] = &["output", "return", "show", "display", "give", "print", "report"];

/// The words of an aggregate.
pub(super) fn agg_words(a: Agg) -> &'static [&'static str] {
    match a {
        Agg::Count | Agg::CountDistinct => &["number", "count", "how many", "amount of"],
        Agg::Sum => &["total", "sum", "how much"],
        Agg::Avg => &["average", "mean", "avg"],
        Agg::Min => &["minimum", "min", "lowest", "smallest", "least", "earliest", "fewest"],
        Agg::Max => &["maximum", "max", "highest", "largest", "most", "latest", "biggest"],
    }
}

/// The permutation putting `items` in the order the question's last
/// output sentence names them, or `None` (an item not found, two items at
/// one place); without such a sentence, a `grouped` query's columns before
/// its aggregates.
pub(super) fn output_order(items: &[Item], grouped: bool, question: &str) -> Option<Vec<usize>> {
    if items.len() < 2 {
        return None;
    }
    let lower = question.to_lowercase();
    let Some(sentence) = output_sentence(&lower) else {
        // Columns first, then aggregates (stable), when grouped.
        if grouped {
            let (cols, aggs): (Vec<usize>, Vec<usize>) = (0..items.len()).partition(|&k| items[k].agg.is_none());
            return Some(cols.into_iter().chain(aggs).collect());
        }
        // A listing: its columns in the order the question names them
        // ("airline names and their abbreviations"), by their column's words,
        // the one named after "by"/"per"/"each" first ("the premium amount
        // of all policies by policy number": the number, then the amount).
        if items.iter().all(|i| i.agg.is_none()) {
            let mut order = mention_order(items, &lower, true)?;
            if let Some(k) = by_key(items, question) {
                order.retain(|&x| x != k);
                order.insert(0, k);
            }
            return Some(order);
        }
        return None;
    };
    mention_order(items, sentence, false)
}

/// The permutation putting `items` in the order `sentence` (lower case)
/// names them, or `None` (an item not found, two items at one place). A
/// column is found by its table's word, else its column's
/// (`column_first`: the other way round).
pub(super) fn mention_order(items: &[Item], sentence: &str, column_first: bool) -> Option<Vec<usize>> {
    // Word starts (byte offsets) and the words.
    let words: Vec<(usize, &str)> = sentence
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| (w.as_ptr() as usize - sentence.as_ptr() as usize, w))
        .collect();
    let find_word = |token: &str| -> Option<usize> {
        if token.len() < 3 {
            // A short word ("id") only whole, or with a plural "s".
            let plural = format!("{token}s");
            return (!token.is_empty())
                .then(|| words.iter().find(|(_, w)| *w == token || *w == plural).map(|(i, _)| *i))
                .flatten();
        }
        let stem: String = token.chars().take(token.len().clamp(3, 6)).collect();
        words.iter().find(|(_, w)| w.starts_with(&stem) || (w.len() >= 3 && token.starts_with(*w))).map(|(i, _)| *i)
    };
    let find_phrase = |p: &str| -> Option<usize> {
        sentence.match_indices(p).map(|(i, _)| i).find(|&i| {
            let before = sentence[..i].chars().last().is_none_or(|c| !c.is_alphanumeric());
            let after = sentence[i + p.len()..].chars().next().is_none_or(|c| !c.is_alphanumeric());
            before && after
        })
    };
    let mut at: Vec<(usize, usize)> = Vec::new();
    for (k, it) in items.iter().enumerate() {
        let pos = match (it.agg, it.col.as_deref()) {
            (Some(a), _) => agg_words(a).iter().filter_map(|w| find_phrase(w)).min(),
            // A bucket by its period's word ("the month as YYYY-MM").
            (None, Some(_)) if it.bucket.is_some() => it.bucket.and_then(|b| find_word(b.as_str())),
            (None, Some(c)) => {
                let lower = c.to_lowercase();
                let (table, column) = lower.split_once('_').unwrap_or(("", lower.as_str()));
                let by_column = || column.split('_').filter_map(find_word).min();
                if column_first {
                    by_column().or_else(|| find_word(table))
                } else {
                    find_word(table).or_else(by_column)
                }
            }
            (None, None) => None,
        }?;
        at.push((pos, k));
    }
    at.sort();
    if at.windows(2).any(|w| w[0].0 == w[1].0) {
        return None;
    }
    Some(at.into_iter().map(|(_, k)| k).collect())
}

/// Whether `question` (lower case) says some text starts (`true`) or ends
/// (`false`) with `x` (lower case): "starting with 'dev'", "begins with dev".
pub(super) fn anchored(question: &str, x: &str) -> Option<bool> {
    let starts = [
        "start with",
        "starts with",
        "starting with",
        "begin with",
        "begins with",
        "beginning with",
        "prefix",
        "prefixed with",
    ];
    let ends = ["end with", "ends with", "ending with", "suffix", "suffixed with"];
    let after = |phrase: &str| {
        question.match_indices(phrase).any(|(i, _)| {
            let rest = question[i + phrase.len()..].trim_start_matches([' ', '\'', '"', '`', '‘', '“']);
            rest.starts_with(x)
        })
    };
    if starts.iter().any(|p| after(p)) {
        Some(true)
    } else if ends.iter().any(|p| after(p)) {
        Some(false)
    } else {
        None
    }
}
