//! Probes K(x) (crush4sql §3.1): a hallucinated minimal schema
//! `T(c1, c2); U(c3)` written out as `T.c1`, `T.c2`, `U.c3`. The schema comes
//! from the user (`--probes`), from a recording, from an LLM (the
//! `crush_hallucinate` prompt), or — offline, without an LLM — from the
//! question's own phrases.

use crate::error::{Error, Result};
use crate::llm::{ChatModel, ChatRequest};
use crate::prompts::Prompts;

/// Parse a hallucinated schema into probe texts.
///
/// Accepts `T(c1, c2); U(c3)`, `T(c1, c2), U(c3)`, one table per line, and a
/// list of such strings (as recorded in bird_dev.json). A bare name with no
/// parentheses is one probe. Duplicates are dropped, order is kept.
pub fn parse_schema(text: &str) -> Result<Vec<String>> {
    let mut probes: Vec<String> = Vec::new();
    let mut push = |p: String| {
        if !p.is_empty() && !probes.iter().any(|q| q.eq_ignore_ascii_case(&p)) {
            probes.push(p);
        }
    };
    let mut depth = 0i32;
    let mut item = String::new();
    let flush = |item: &mut String, push: &mut dyn FnMut(String)| {
        let raw = std::mem::take(item);
        let raw = clean(&raw);
        if raw.is_empty() {
            return;
        }
        match raw.find('(') {
            Some(open) => {
                let table = clean(&raw[..open]);
                let inner = raw[open + 1..].trim_end_matches(')');
                let cols: Vec<String> = inner.split(',').map(clean).filter(|c| !c.is_empty()).collect();
                if cols.is_empty() {
                    push(table.clone());
                }
                for c in cols {
                    push(if table.is_empty() { c } else { format!("{table}.{c}") });
                }
            }
            None => push(raw),
        }
    };
    for ch in text.chars() {
        match ch {
            '(' => {
                depth += 1;
                item.push(ch);
            }
            ')' => {
                depth -= 1;
                item.push(ch);
                if depth <= 0 {
                    depth = 0;
                    flush(&mut item, &mut push);
                }
            }
            ';' | '\n' | ',' if depth == 0 => flush(&mut item, &mut push),
            _ => item.push(ch),
        }
    }
    flush(&mut item, &mut push);
    if probes.is_empty() {
        return Err(Error::Input(format!(
            "no probes in `{}`: write a hallucinated schema like `Client(gender, birth_date); Loan(amount)`",
            text.chars().take(200).collect::<String>()
        )));
    }
    Ok(probes)
}

/// Trim whitespace, list bullets, quotes and code fences around a name.
fn clean(s: &str) -> String {
    s.trim()
        .trim_start_matches(['-', '*', '•'])
        .trim_matches(|c: char| c.is_whitespace() || matches!(c, '`' | '"' | '\'' | '[' | ']' | '.' | ':'))
        .to_string()
}

/// Ask `llm` to hallucinate a minimal schema for `question` with the
/// embedded `crush_hallucinate` prompt (the paper's Table 1); return probes.
pub fn hallucinate(llm: &dyn ChatModel, question: &str) -> Result<Vec<String>> {
    hallucinate_with(llm, &Prompts::embedded(), question)
}

/// [`hallucinate`] with a given prompt set (e.g. `--prompts DIR` overrides).
pub fn hallucinate_with(llm: &dyn ChatModel, prompts: &Prompts, question: &str) -> Result<Vec<String>> {
    let prompt = prompts.render("crush_hallucinate", serde_json::json!({ "question": question }))?;
    let req = ChatRequest::greedy("crush_hallucinate", prompt);
    let resp = llm.chat(&req)?;
    let answer = resp.choices.first().ok_or_else(|| Error::llm("crush_hallucinate", "the model returned no answer"))?;
    // Models sometimes echo the "Schema:" label or wrap in a code fence.
    let body = answer.replace("```", "\n");
    let body = body.trim().trim_start_matches("Schema:").trim();
    parse_schema(body).map_err(|_| {
        Error::llm(
            "crush_hallucinate",
            format!(
                "answer is not a schema like `T(c1, c2), U(c3)`: {:?}",
                answer.chars().take(200).collect::<String>()
            ),
        )
    })
}

const STOPWORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "among", "an", "and", "any", "are", "as", "at", "be", "been", "before",
    "between", "both", "but", "by", "can", "did", "do", "does", "each", "either", "for", "from", "give", "had", "has",
    "have", "how", "i", "if", "in", "into", "is", "it", "its", "list", "many", "me", "much", "name", "names", "of",
    "on", "or", "other", "please", "show", "than", "that", "the", "their", "them", "there", "these", "they", "this",
    "those", "to", "was", "were", "what", "when", "where", "which", "who", "whose", "why", "with", "within", "would",
    "you", "your", "find", "tell", "state", "indicate", "provide", "among", "more", "less", "most", "least", "number",
    "count", "total",
];

/// Offline probes (no LLM): the question itself plus its content phrases,
/// i.e. maximal runs of words that are not stopwords, split at punctuation.
/// "How many clients in Prague have a gold card?" gives the question,
/// "clients", "Prague" and "gold card".
pub fn question_phrases(question: &str) -> Vec<String> {
    let mut out = vec![question.trim().to_string()];
    let mut cur: Vec<String> = Vec::new();
    let flush = |cur: &mut Vec<String>, out: &mut Vec<String>| {
        if !cur.is_empty() {
            let p = cur.join(" ");
            if !out.iter().any(|o| o.eq_ignore_ascii_case(&p)) {
                out.push(p);
            }
            cur.clear();
        }
    };
    for token in question.split_inclusive(|c: char| c.is_whitespace() || matches!(c, ',' | '?' | ';' | '!' | '(' | ')'))
    {
        let ends = token.ends_with([',', '?', ';', '!', '(', ')']);
        let word = token.trim_matches(|c: char| !c.is_alphanumeric() && c != '-' && c != '_' && c != '\'');
        let word = word.trim_matches('\'');
        if word.is_empty() || STOPWORDS.contains(&word.to_ascii_lowercase().as_str()) {
            flush(&mut cur, &mut out);
        } else {
            cur.push(word.to_string());
        }
        if ends {
            flush(&mut cur, &mut out);
        }
    }
    flush(&mut cur, &mut out);
    out.retain(|p| !p.is_empty());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{ChatResponse, Usage};

    #[test]
    fn parses_the_cli_and_recorded_forms() {
        assert_eq!(parse_schema("T(c1, c2); U(c3)").unwrap(), ["T.c1", "T.c2", "U.c3"]);
        assert_eq!(
            parse_schema("Schools(school_id, county, free_rate), Eligibility(school_id, grade_level)").unwrap(),
            [
                "Schools.school_id",
                "Schools.county",
                "Schools.free_rate",
                "Eligibility.school_id",
                "Eligibility.grade_level"
            ]
        );
        assert_eq!(
            parse_schema("- Station(Name, Latitude)\n- Station(name)").unwrap(),
            ["Station.Name", "Station.Latitude"]
        );
        assert_eq!(parse_schema("Instructor").unwrap(), ["Instructor"]);
    }

    #[test]
    fn empty_schema_is_an_error() {
        let e = parse_schema(" ;, ").unwrap_err().to_string();
        assert!(e.contains("no probes"), "{e}");
    }

    #[test]
    fn phrases_split_at_stopwords() {
        let p = question_phrases("How many clients in Prague have a gold card?");
        assert_eq!(p, ["How many clients in Prague have a gold card?", "clients", "Prague", "gold card"]);
    }

    struct Fixed(&'static str);
    impl ChatModel for Fixed {
        fn chat(&self, req: &ChatRequest) -> Result<ChatResponse> {
            assert_eq!(req.phase, "crush_hallucinate");
            assert!(
                req.messages[0].content.contains("Question: Who is the oldest client?\nSchema:"),
                "{}",
                req.messages[0].content
            );
            assert!(req.messages[0].content.contains("Instructor(name, salary)"));
            Ok(ChatResponse {
                choices: vec![self.0.into()],
                usage: Usage::default(),
                latency_ms: 0.0,
                structured: false,
                requests: 1,
                truncated: 0,
                local: None,
                cuts: Vec::new(),
                skipped: 0,
            })
        }
        fn model_name(&self) -> String {
            "fixed".into()
        }
    }

    #[test]
    fn hallucination_is_parsed_and_garbage_rejected() {
        let p = hallucinate(&Fixed("Schema: Client(name, birth_date)"), "Who is the oldest client?").unwrap();
        assert_eq!(p, ["Client.name", "Client.birth_date"]);
        let e = hallucinate(&Fixed("   "), "Who is the oldest client?").unwrap_err().to_string();
        assert!(e.contains("crush_hallucinate"), "{e}");
    }
}
