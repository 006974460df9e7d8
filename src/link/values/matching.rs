//! Matching a question against the index. Everything is compared folded
//! (lower case, Latin accents removed: `Société` = `societe`) and by words
//! (split on anything not a letter or digit, and at camel case:
//! `PolicyHolder` = `policy holder`).
//!
//! - A quoted literal (`'dev'`, `"Agent"`) equal to a value: exact; a
//!   prefix of a value: prefix (`'dev'` → `dev-east-1`).
//! - The question's words: a value whose words occur in a row in the
//!   question is exact (also when the value's words written together are
//!   one question word: `policyholder`); a singular/plural variant of its
//!   last word, or a one-letter typo of a one-word value of five letters or
//!   more, is fuzzy; a value that starts with the question's words is a
//!   prefix (`dev` → `dev-east-1`). Words of fewer than three letters,
//!   numbers and common English words never match on their own.
//!
//! A value matched on a code column of a lookup-like table, or on the name
//! column beside such a code column (not by a prefix of words), also yields
//! the code with the name it stands for, on the code column and on every column that joins to it by
//! a relationship of the model (`Agreement_Party_Role.Party_Role_Code`).

use std::collections::{BTreeMap, HashMap};

use super::{MatchKind, ValueIndex, ValueMatch};
use crate::graph::{ColumnId, SchemaGraph};

/// Matches kept per column, and in all.
const PER_COLUMN: usize = 12;
const TOTAL: usize = 60;
/// Score of a value a quoted literal begins; prefixes of words score less.
const LITERAL_PREFIX: f64 = 0.9;
/// Values of more words than this match only through literals.
const MAX_VALUE_WORDS: usize = 6;

/// The plain letter(s) of an accented Latin letter, `""` for a combining
/// mark, `None` for any other character.
fn base(c: char) -> Option<&'static str> {
    Some(match c {
        '\u{300}'..='\u{36f}' => "",
        'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' | 'ā' | 'ă' | 'ą' => "a",
        'æ' => "ae",
        'ç' | 'ć' | 'ĉ' | 'ċ' | 'č' => "c",
        'ď' | 'đ' | 'ð' => "d",
        'è' | 'é' | 'ê' | 'ë' | 'ē' | 'ĕ' | 'ė' | 'ę' | 'ě' => "e",
        'ĝ' | 'ğ' | 'ġ' | 'ģ' => "g",
        'ĥ' | 'ħ' => "h",
        'ì' | 'í' | 'î' | 'ï' | 'ĩ' | 'ī' | 'ĭ' | 'į' | 'ı' => "i",
        'ĳ' => "ij",
        'ĵ' => "j",
        'ķ' => "k",
        'ĺ' | 'ļ' | 'ľ' | 'ŀ' | 'ł' => "l",
        'ñ' | 'ń' | 'ņ' | 'ň' => "n",
        'ò' | 'ó' | 'ô' | 'õ' | 'ö' | 'ø' | 'ō' | 'ŏ' | 'ő' => "o",
        'œ' => "oe",
        'ŕ' | 'ŗ' | 'ř' => "r",
        'ś' | 'ŝ' | 'ş' | 'š' | 'ș' => "s",
        'ß' => "ss",
        'ţ' | 'ť' | 'ŧ' | 'ț' => "t",
        'ù' | 'ú' | 'û' | 'ü' | 'ũ' | 'ū' | 'ŭ' | 'ů' | 'ű' | 'ų' => "u",
        'ŵ' => "w",
        'ý' | 'ÿ' | 'ŷ' => "y",
        'ź' | 'ż' | 'ž' => "z",
        'þ' => "th",
        _ => return None,
    })
}

/// `s` in lower case with Latin accents removed.
pub fn fold(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        for lc in ch.to_lowercase() {
            match base(lc) {
                Some(b) => out.push_str(b),
                None => out.push(lc),
            }
        }
    }
    out
}

fn is_mark(c: char) -> bool {
    ('\u{300}'..='\u{36f}').contains(&c)
}

/// The folded words of `s`: runs of letters and digits, also split where a
/// lower-case letter is followed by an upper-case one.
pub fn words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev: Option<char> = None;
    for ch in s.chars() {
        if is_mark(ch) {
            continue;
        }
        if ch.is_alphanumeric() {
            if prev.is_some_and(|p| p.is_lowercase() && ch.is_uppercase()) && !cur.is_empty() {
                out.push(fold(&cur));
                cur.clear();
            }
            cur.push(ch);
        } else if !cur.is_empty() {
            out.push(fold(&cur));
            cur.clear();
        }
        prev = Some(ch);
    }
    if !cur.is_empty() {
        out.push(fold(&cur));
    }
    out
}

/// Quoted literals of the question: text between matching quotes (`'`,
/// `"`, `` ` ``, `‘’`, `“”`) that open after a non-letter and close before
/// one (so "client's" holds none), at most 64 characters, folded.
pub fn literals(q: &str) -> Vec<String> {
    let chars: Vec<char> = q.chars().collect();
    let close_of = |c: char| match c {
        '\'' => Some('\''),
        '"' => Some('"'),
        '`' => Some('`'),
        '‘' => Some('’'),
        '“' => Some('”'),
        _ => None,
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let Some(close) = close_of(chars[i]) else {
            i += 1;
            continue;
        };
        if i > 0 && chars[i - 1].is_alphanumeric() {
            i += 1;
            continue;
        }
        let end =
            (i + 1..chars.len()).find(|&j| chars[j] == close && chars.get(j + 1).is_none_or(|n| !n.is_alphanumeric()));
        match end {
            Some(j) if j > i + 1 && j - i - 1 <= 64 => {
                let lit: String = chars[i + 1..j].iter().collect();
                let lit = fold(lit.trim());
                if !lit.is_empty() && !lit.contains('\n') && !out.contains(&lit) {
                    out.push(lit);
                }
                i = j + 1;
            }
            _ => i += 1,
        }
    }
    out
}

/// Common English words of questions, which never match on their own.
const STOPWORDS: &[&str] = &[
    "the",
    "and",
    "for",
    "with",
    "all",
    "are",
    "was",
    "were",
    "which",
    "what",
    "who",
    "whom",
    "whose",
    "how",
    "many",
    "much",
    "list",
    "show",
    "give",
    "find",
    "get",
    "return",
    "output",
    "each",
    "every",
    "per",
    "from",
    "that",
    "this",
    "these",
    "those",
    "have",
    "has",
    "had",
    "not",
    "than",
    "more",
    "less",
    "most",
    "least",
    "their",
    "its",
    "there",
    "where",
    "when",
    "into",
    "over",
    "under",
    "between",
    "any",
    "some",
    "only",
    "also",
    "both",
    "name",
    "names",
    "number",
    "total",
    "count",
    "average",
    "sum",
    "use",
    "used",
    "uses",
    "using",
    "starting",
    "start",
    "starts",
    "ending",
    "end",
    "ends",
    "contain",
    "contains",
    "containing",
    "whose",
    "they",
    "them",
    "one",
    "two",
    "does",
    "did",
    "you",
    "can",
    "our",
    "out",
    "about",
    "order",
    "sorted",
    "sort",
    "top",
    "value",
    "values",
    "distinct",
];

/// Whether a run of question words carries meaning: one word of three
/// letters or more that holds a letter and is not a common word.
fn informative(ws: &[String]) -> bool {
    ws.iter().any(|w| w.chars().count() >= 3 && w.chars().any(char::is_alphabetic) && !STOPWORDS.contains(&w.as_str()))
}

/// Whether `a` and `b` are the same word but for a plural ending
/// (`agent`/`agents`, `class`/`classes`, `city`/`cities`).
fn plural_pair(a: &str, b: &str) -> bool {
    let one_way = |x: &str, y: &str| {
        (x.chars().count() >= 3 && y.strip_prefix(x).is_some_and(|rest| rest == "s" || rest == "es"))
            || (x.len() >= 3 && x.ends_with('y') && y.ends_with("ies") && x[..x.len() - 1] == y[..y.len() - 3])
    };
    one_way(a, b) || one_way(b, a)
}

/// The question's words and literals, folded.
struct Question {
    words: Vec<String>,
    literals: Vec<String>,
    /// Positions of each word.
    at: HashMap<String, Vec<usize>>,
}

impl Question {
    fn new(q: &str) -> Self {
        let words = words(q);
        let mut at: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, w) in words.iter().enumerate() {
            at.entry(w.clone()).or_default().push(i);
        }
        Question { words, literals: literals(q), at }
    }
}

/// The best way `value` matches the question: (kind, score, what matched).
fn best_match(q: &Question, value: &str) -> Option<(MatchKind, f64, String)> {
    let fv = fold(value);
    let mut best: Option<(MatchKind, f64, String)> = None;
    let mut offer = |k: MatchKind, s: f64, m: &str| {
        if best.as_ref().is_none_or(|b| s > b.1) {
            best = Some((k, s, m.to_string()));
        }
    };
    for lit in &q.literals {
        if fv == *lit {
            offer(MatchKind::Exact, 1.0, lit);
        } else if lit.chars().count() >= 2 && fv.starts_with(lit.as_str()) {
            offer(MatchKind::Prefix, LITERAL_PREFIX, lit);
        }
    }
    let vw = words(value);
    if vw.is_empty() || vw.len() > MAX_VALUE_WORDS || !vw.iter().any(|w| w.chars().any(char::is_alphabetic)) {
        return best;
    }
    let k = vw.len();
    let qw = &q.words;
    // Runs of question words starting with the value's first word.
    for &i in q.at.get(&vw[0]).map(Vec::as_slice).unwrap_or(&[]) {
        let n = (0..k).take_while(|&j| qw.get(i + j) == Some(&vw[j])).count();
        let run = &qw[i..i + n];
        if n == k && informative(run) {
            offer(MatchKind::Exact, 1.0, &run.join(" "));
        } else if n == k - 1 && k >= 2 && qw.get(i + n).is_some_and(|w| plural_pair(w, &vw[n])) {
            let run = &qw[i..=i + n];
            if informative(run) {
                offer(MatchKind::Fuzzy, 0.85, &run.join(" "));
            }
        } else if n >= 1 && n < k && informative(run) {
            offer(MatchKind::Prefix, 0.5 + 0.3 * n as f64 / k as f64, &run.join(" "));
        }
    }
    if k >= 2 {
        let joined: String = vw.concat();
        if q.at.contains_key(&joined) && informative(std::slice::from_ref(&joined)) {
            offer(MatchKind::Exact, 0.95, &joined);
        }
    } else {
        let v = &vw[0];
        for w in qw {
            if plural_pair(w, v) && informative(std::slice::from_ref(w)) {
                offer(MatchKind::Fuzzy, 0.85, w);
            } else if w.chars().count() >= 5
                && v.chars().count() >= 5
                && w != v
                && strsim::damerau_levenshtein(w, v) == 1
                && informative(std::slice::from_ref(w))
            {
                offer(MatchKind::Fuzzy, 0.6, w);
            }
        }
    }
    best
}

/// Rank order: score, then exact before prefix before fuzzy, then the
/// shorter value, then the value.
fn rank(a: &ValueMatch, b: &ValueMatch) -> std::cmp::Ordering {
    b.score
        .total_cmp(&a.score)
        .then(a.kind.cmp(&b.kind))
        .then(a.value.len().cmp(&b.value.len()))
        .then(a.value.cmp(&b.value))
}

/// The values of `index` that `question` matches, with the codes they
/// stand for (see the module documentation): at most 12 per column and 60
/// in all, best first. Columns the model no longer has are ignored.
pub fn match_question(graph: &SchemaGraph, index: &ValueIndex, question: &str) -> Vec<ValueMatch> {
    let q = Question::new(question);
    let col_id = |table: &str, column: &str| graph.table_id(table).and_then(|t| graph.names().column(t, column));
    let mut per_col: BTreeMap<ColumnId, Vec<ValueMatch>> = BTreeMap::new();
    for cv in &index.columns {
        let Some(c) = col_id(&cv.table, &cv.column) else { continue };
        for v in &cv.values {
            if let Some((kind, score, matched)) = best_match(&q, v) {
                per_col.entry(c).or_default().push(ValueMatch {
                    column: c,
                    value: v.clone(),
                    kind,
                    score,
                    matched,
                    means: None,
                });
            }
        }
    }
    // Codes: a matched name gives its code; a matched code its name.
    let mut coded: Vec<ValueMatch> = Vec::new();
    for cp in &index.codes {
        let (Some(code_col), Some(name_col)) = (col_id(&cp.table, &cp.code), col_id(&cp.table, &cp.name)) else {
            continue;
        };
        let targets = joined_columns(graph, code_col);
        let hits: Vec<(&[String; 2], MatchKind, f64, String)> = cp
            .pairs
            .iter()
            .filter_map(|p| {
                let by_name = per_col.get(&name_col).and_then(|ms| ms.iter().find(|m| m.value == p[1]));
                let by_code = per_col.get(&code_col).and_then(|ms| ms.iter().find(|m| m.value == p[0]));
                by_name
                    .or(by_code)
                    // A value that only starts with the question's words
                    // ("policy" → PolicyHolder) is too weak to bring its code.
                    .filter(|m| !(m.kind == MatchKind::Prefix && m.score < LITERAL_PREFIX))
                    .map(|m| (p, m.kind, m.score, m.matched.clone()))
            })
            .collect();
        for (p, kind, score, matched) in hits {
            for &t in &targets {
                coded.push(ValueMatch {
                    column: t,
                    value: p[0].clone(),
                    kind,
                    score,
                    matched: matched.clone(),
                    means: Some(p[1].clone()),
                });
            }
        }
    }
    for m in coded {
        let ms = per_col.entry(m.column).or_default();
        // A code shown with its name replaces the bare code.
        ms.retain(|x| !(x.value == m.value && x.means.is_none()));
        if !ms.iter().any(|x| x.value == m.value && x.means == m.means) {
            ms.push(m);
        }
    }
    let mut out: Vec<ValueMatch> = Vec::new();
    for (_, mut ms) in per_col {
        ms.sort_by(rank);
        ms.truncate(PER_COLUMN);
        out.extend(ms);
    }
    out.sort_by(|a, b| rank(a, b).then(a.column.cmp(&b.column)));
    out.truncate(TOTAL);
    out
}

/// Column `c` and every column that joins to it through a relationship of
/// the model (a foreign key to a lookup's code, or the code it references).
fn joined_columns(graph: &SchemaGraph, c: ColumnId) -> Vec<ColumnId> {
    let (table, column) = graph.column_names(c);
    let mut out = vec![c];
    for rel in &graph.model().relationships {
        for [f, t] in &rel.on {
            let other = if rel.to == table && t.eq_ignore_ascii_case(column) {
                Some((&rel.from, f))
            } else if rel.from == table && f.eq_ignore_ascii_case(column) {
                Some((&rel.to, t))
            } else {
                None
            };
            if let Some(o) = other.and_then(|(ot, oc)| graph.table_id(ot).and_then(|id| graph.names().column(id, oc))) {
                if !out.contains(&o) {
                    out.push(o);
                }
            }
        }
    }
    out
}
