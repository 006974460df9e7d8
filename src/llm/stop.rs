//! When a sample being decoded has run away: the repetition stop, fed one
//! generated token at a time by a decoding backend (the embedded model's
//! loop; a test feeds it a scripted answer).
//!
//! Two rules, either ends the sample as cut ([`Cut`]):
//! - **token loop**: the sample ends with one span of at most
//!   [`LOOP_MAX_SPAN`] tokens repeated [`LOOP_MIN_REPEATS`] times or more,
//!   [`LOOP_MIN_TOKENS`] tokens in all (session 6: DDO Q18 listed
//!   `,'United States of America'` to the 640-token cap);
//! - **text loop**: the answer's text with every run of blanks read as one
//!   blank ends with one span of at most [`TEXT_MAX_SPAN`] characters
//!   repeated [`TEXT_MIN_REPEATS`] times or more, [`TEXT_MIN_CHARS`]
//!   characters in all. The token rule misses loops whose blanks vary: the
//!   recorded DDO answers that ran to the 640-token cap repeated
//!   `-"CMEMORY_reservation"  -"CMEMORY_overheadlimit"` with 23 and 24
//!   blanks in turn (benchmarks/cassettes/ddo-s22-fresh.jsonl, line 130;
//!   ddo-heldout-s20.jsonl, line 111), which the model tokenizes
//!   differently each time.
//!
//! Legitimate SQL does not repeat one span of 32 characters or more three
//! times in a row, nor a short one 64 characters long: a list of distinct
//! values or a pivot over distinct codes is not a repeat.

use crate::types::chat::Cut;

/// See the module doc.
pub const LOOP_MAX_SPAN: usize = 32;
/// See the module doc.
pub const LOOP_MIN_REPEATS: usize = 4;
/// See the module doc.
pub const LOOP_MIN_TOKENS: usize = 32;
/// See the module doc.
pub const TEXT_MAX_SPAN: usize = 200;
/// See the module doc.
pub const TEXT_MIN_REPEATS: usize = 3;
/// See the module doc.
pub const TEXT_MIN_CHARS: usize = 64;

/// Whether `ids` ends in a token loop (see [`LOOP_MAX_SPAN`]); the number of
/// tokens of the repeated span when it does.
pub fn token_loop(ids: &[u32]) -> Option<usize> {
    (1..=LOOP_MAX_SPAN).find(|&k| {
        let reps = LOOP_MIN_REPEATS.max(LOOP_MIN_TOKENS.div_ceil(k));
        ids.len() >= k * reps && {
            let tail = &ids[ids.len() - k * reps..];
            let span = &tail[..k];
            tail.chunks(k).all(|c| c == span)
        }
    })
}

/// The text loop at the end of `norm` (blanks collapsed): (span length,
/// repeats), the shortest span.
fn text_loop(norm: &[u8]) -> Option<(usize, usize)> {
    for p in 1..=TEXT_MAX_SPAN.min(norm.len() / TEXT_MIN_REPEATS) {
        let reps = TEXT_MIN_REPEATS.max(TEXT_MIN_CHARS.div_ceil(p));
        if norm.len() < p * reps {
            continue;
        }
        let tail = &norm[norm.len() - p * reps..];
        let span = &tail[..p];
        if tail.chunks(p).all(|c| c == span) {
            return Some((p, reps));
        }
    }
    None
}

/// Watches one sample as it is decoded.
#[derive(Debug, Clone, Default)]
pub struct Stopper {
    ids: Vec<u32>,
    /// The text so far.
    text: Vec<u8>,
    /// The text with every run of blanks as one space.
    norm: Vec<u8>,
    /// For each byte of `norm`, the end of its source in `text`.
    ends: Vec<usize>,
}

impl Stopper {
    /// A stopper for a new sample.
    pub fn new() -> Self {
        Stopper::default()
    }

    /// Take one generated token (`id`, its text `piece`); `Some` when the
    /// sample now loops and must end.
    pub fn push(&mut self, id: u32, piece: &[u8]) -> Option<Cut> {
        self.ids.push(id);
        for &b in piece {
            self.text.push(b);
            let blank = b.is_ascii_whitespace();
            if blank && self.norm.last() == Some(&b' ') {
                if let Some(e) = self.ends.last_mut() {
                    *e = self.text.len();
                }
                continue;
            }
            self.norm.push(if blank { b' ' } else { b });
            self.ends.push(self.text.len());
        }
        if let Some(k) = token_loop(&self.ids) {
            // Where the loop starts in the text: the tokens before its
            // repeats, plus one copy of the span.
            let reps = LOOP_MIN_REPEATS.max(LOOP_MIN_TOKENS.div_ceil(k));
            return Some(self.cut_tokens(k, reps));
        }
        let (p, reps) = text_loop(&self.norm)?;
        let start = self.norm.len() - p * reps;
        let span = String::from_utf8_lossy(&self.norm[start..start + p]).trim().to_string();
        // Keep the answer up to the end of the span's first copy.
        let keep = self.ends[start + p - 1];
        Some(Cut { choice: 0, kind: "loop".into(), keep, span, repeats: reps as u32 })
    }

    fn cut_tokens(&self, _k: usize, _reps: usize) -> Cut {
        // The token rule sees ids, not text: name the repeat by its text,
        // found the same way on the text, else keep the whole answer.
        match text_loop_relaxed(&self.norm) {
            Some((p, reps)) => {
                let start = self.norm.len() - p * reps;
                let span = String::from_utf8_lossy(&self.norm[start..start + p]).trim().to_string();
                Cut { choice: 0, kind: "loop".into(), keep: self.ends[start + p - 1], span, repeats: reps as u32 }
            }
            None => Cut { choice: 0, kind: "loop".into(), keep: self.text.len(), span: String::new(), repeats: 0 },
        }
    }

    /// The text decoded so far.
    pub fn text(&self) -> &[u8] {
        &self.text
    }
}

/// The shortest span the text ends with at least [`LOOP_MIN_REPEATS`]
/// times (no length minimum), with its full repeat count.
fn text_loop_relaxed(norm: &[u8]) -> Option<(usize, usize)> {
    for p in 1..=TEXT_MAX_SPAN.min(norm.len() / LOOP_MIN_REPEATS) {
        let span = &norm[norm.len() - p..];
        let mut reps = 1;
        while norm.len() >= p * (reps + 1) && &norm[norm.len() - p * (reps + 1)..norm.len() - p * reps] == span {
            reps += 1;
        }
        if reps >= LOOP_MIN_REPEATS {
            return Some((p, reps));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feed `pieces` (one per token, ids by text) until the stopper cuts.
    fn run(pieces: &[&str]) -> (usize, Option<Cut>) {
        let mut s = Stopper::new();
        let mut ids = std::collections::HashMap::new();
        for (i, p) in pieces.iter().enumerate() {
            let n = ids.len() as u32;
            let id = *ids.entry(*p).or_insert(n);
            if let Some(c) = s.push(id, p.as_bytes()) {
                return (i + 1, Some(c));
            }
        }
        (pieces.len(), None)
    }

    #[test]
    fn a_repeated_span_is_a_loop_and_sql_is_not() {
        // `,'United States of America'` as 8 tokens, 4 times: a loop.
        let span = [11u32, 12, 13, 14, 15, 16, 17, 18];
        let mut ids: Vec<u32> = (100..160).collect();
        for _ in 0..3 {
            ids.extend(span);
        }
        assert!(token_loop(&ids).is_none(), "3 repeats are not yet a loop");
        ids.extend(span);
        assert_eq!(token_loop(&ids), Some(8));
        // One token 32 times is a loop; 31 times is not.
        assert!(token_loop(&[7; 32]).is_some() && token_loop(&[7; 31]).is_none());
        // A short span needs 32 tokens in all: 3 tokens x 11.
        let three: Vec<u32> = [1u32, 2, 3].repeat(10);
        assert!(token_loop(&three).is_none() && token_loop(&[1u32, 2, 3].repeat(11)).is_some());
        // Distinct tokens never loop; a span longer than 32 is not checked.
        assert!(token_loop(&(0..500).collect::<Vec<u32>>()).is_none());
        assert!(token_loop(&(0..33).collect::<Vec<u32>>().repeat(4)).is_none());
    }

    #[test]
    fn a_scripted_loop_with_varying_blanks_stops_early_as_cut() {
        // The recorded DDO answer that ran to the 640-token cap: the same
        // two names with 23 and 24 blanks in turn (tokenized differently).
        let mut pieces: Vec<String> =
            ["```sql\n", "SELECT", " DATACENTER_name", " FROM", " lucy_view", " WHERE", " x", " ="]
                .iter()
                .map(|s| s.to_string())
                .collect();
        for i in 0..300 {
            pieces.push(" ".repeat(23 + i % 2));
            pieces.push("-\"".into());
            pieces.push(if i % 2 == 0 { "CMEMORY_reservation" } else { "CMEMORY_overheadlimit" }.into());
            pieces.push("\"".into());
        }
        let refs: Vec<&str> = pieces.iter().map(String::as_str).collect();
        let (at, cut) = run(&refs);
        let cut = cut.expect("the loop is cut");
        assert!(at < 60, "stopped after {at} of {} tokens", refs.len());
        assert_eq!(cut.kind, "loop");
        assert!(cut.span.contains("CMEMORY_reservation") && cut.span.contains("CMEMORY_overheadlimit"), "{cut:?}");
        assert!(cut.repeats >= 3);
        // What is kept is the answer up to the span's first copy.
        let text: String = refs[..at].concat();
        let kept = &text[..cut.keep];
        assert!(kept.starts_with("```sql\nSELECT DATACENTER_name") && kept.len() < text.len(), "{kept:?}");
        assert_eq!(kept.matches("CMEMORY_reservation").count(), 1, "{kept:?}");
    }

    #[test]
    fn a_token_loop_names_its_span() {
        let mut pieces = vec!["SELECT", " a", " IN", " ("];
        for _ in 0..40 {
            pieces.extend([",'", "USA", "'"]);
        }
        let (at, cut) = run(&pieces);
        let cut = cut.expect("cut");
        assert!(at < pieces.len());
        assert_eq!(cut.span, ",'USA'");
    }

    #[test]
    fn legitimate_sql_is_not_cut() {
        let sql = "SELECT CLIENT_name, SUM(CASE WHEN PAYMENT_kind = 'card' THEN PAYMENT_amount ELSE 0 END) AS card, \
                   SUM(CASE WHEN PAYMENT_kind = 'cash' THEN PAYMENT_amount ELSE 0 END) AS cash, \
                   SUM(CASE WHEN PAYMENT_kind = 'wire' THEN PAYMENT_amount ELSE 0 END) AS wire \
                   FROM lucy_view WHERE CLIENT_country IN ('France', 'Germany', 'Italy', 'Spain', 'Portugal') \
                   GROUP BY CLIENT_name ORDER BY 2 DESC LIMIT 10;     \n\n\n     ";
        let pieces: Vec<String> = sql.split_inclusive(' ').map(String::from).collect();
        let refs: Vec<&str> = pieces.iter().map(String::as_str).collect();
        assert_eq!(run(&refs).1, None);
        // Character by character too.
        let chars: Vec<String> = sql.chars().map(String::from).collect();
        let refs: Vec<&str> = chars.iter().map(String::as_str).collect();
        assert_eq!(run(&refs).1, None);
    }
}
