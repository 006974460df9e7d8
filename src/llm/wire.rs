//! The OpenAI chat-completions wire format: request bodies, answer parsing,
//! and recognising a server's refusal of a parameter (`n`, `response_format`).

use serde_json::{json, Value};

use super::{ChatRequest, Usage};

/// Property name used when a non-object schema is wrapped in an object
/// (OpenAI's strict mode only accepts an object at the root).
pub const WRAP_KEY: &str = "answer";

/// Which constraint of a request goes to the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sent {
    /// None: the answer is parsed from free text.
    Nothing,
    /// `ChatRequest::response_schema`, as `response_format`.
    Schema,
    /// `ChatRequest::grammar`, in this server's form.
    Grammar(GrammarForm),
}

/// The two ways servers take a Lark (llguidance) grammar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GrammarForm {
    /// llama.cpp's server: `"grammar"`, marked `%llguidance` so a server
    /// built with LLGuidance hands it to LLGuidance instead of its GBNF parser.
    LlamaCpp,
    /// vLLM: `structured_outputs.grammar` (0.10+), and `guided_grammar`
    /// for releases before 0.12 (newer ones ignore the unknown field).
    Vllm,
}

/// The header llama.cpp's server looks for to hand a grammar to LLGuidance.
pub const LLGUIDANCE_HEADER: &str = "%llguidance {}\n";

/// A request body for `POST /chat/completions`.
///
/// `n` is only sent when above 1 (some servers reject the field otherwise);
/// the schema, when sent, goes in OpenAI's `response_format` form, which
/// OpenAI, vLLM, Ollama (0.5+) and llama.cpp's server all accept; a grammar
/// goes in the form of the server that takes it ([`GrammarForm`]).
/// Returns the body and whether the schema was wrapped.
pub fn request_body(model: &str, req: &ChatRequest, n: usize, sent: Sent, max_tokens: Option<u32>) -> (Value, bool) {
    let mut body = json!({
        "model": model,
        "messages": req.messages,
        "temperature": req.temperature,
        "stream": false,
    });
    if n > 1 {
        body["n"] = json!(n);
    }
    // `max_tokens`, not OpenAI's newer `max_completion_tokens`: it is the
    // name vLLM, Ollama and llama.cpp accept, and OpenAI still does for
    // chat models.
    if let Some(m) = max_tokens {
        body["max_tokens"] = json!(m);
    }
    let mut wrapped = false;
    if let (Sent::Grammar(form), Some(g)) = (sent, &req.grammar) {
        match form {
            GrammarForm::LlamaCpp => body["grammar"] = json!(format!("{LLGUIDANCE_HEADER}{g}")),
            GrammarForm::Vllm => {
                body["structured_outputs"] = json!({"grammar": g});
                body["guided_grammar"] = json!(g);
            }
        }
    }
    if let (Sent::Schema, Some(s)) = (sent, &req.response_schema) {
        let (schema, w) = wrap_schema(s);
        wrapped = w;
        body["response_format"] = json!({
            "type": "json_schema",
            "json_schema": {"name": schema_name(&req.phase), "schema": schema, "strict": true},
        });
    }
    (body, wrapped)
}

/// OpenAI requires an object at the schema root; arrays and enums are wrapped
/// as `{"answer": <schema>}` and unwrapped again by [`unwrap_answer`].
fn wrap_schema(schema: &Value) -> (Value, bool) {
    if schema.get("type").and_then(Value::as_str) == Some("object") {
        return (schema.clone(), false);
    }
    let wrapped = json!({
        "type": "object",
        "properties": {WRAP_KEY: schema},
        "required": [WRAP_KEY],
        "additionalProperties": false,
    });
    (wrapped, true)
}

/// `json_schema.name` must match `^[a-zA-Z0-9_-]{1,64}$`.
fn schema_name(phase: &str) -> String {
    let s: String =
        phase.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).take(64).collect();
    if s.is_empty() {
        "answer".into()
    } else {
        s
    }
}

/// Turn `{"answer": X}` back into the JSON text of X, so phases see the
/// answer in the shape their schema asked for. Other texts pass unchanged.
pub fn unwrap_answer(text: String) -> String {
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(mut m)) if m.len() == 1 && m.contains_key(WRAP_KEY) => {
            let inner = m.remove(WRAP_KEY).unwrap_or(Value::Null);
            serde_json::to_string(&inner).unwrap_or(text)
        }
        _ => text,
    }
}

/// Choices and usage of one HTTP answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    pub choices: Vec<String>,
    pub usage: Usage,
    /// How many choices stopped at the token limit (`finish_reason: length`).
    pub truncated: u32,
}

/// Parse a chat-completions answer; the error says what is wrong with it.
pub fn parse_completion(v: &Value) -> Result<Completion, String> {
    if let Some(err) = v.get("error").filter(|e| !e.is_null()) {
        let msg = err.get("message").and_then(Value::as_str).map(str::to_string).unwrap_or_else(|| err.to_string());
        return Err(format!("the server answered with an error object: {}", excerpt(&msg, 300)));
    }
    let Some(arr) = v.get("choices").and_then(Value::as_array) else {
        return Err("the answer has no `choices` array (is --llm-url an OpenAI-compatible /v1 endpoint?)".into());
    };
    if arr.is_empty() {
        return Err("the answer has an empty `choices` array".into());
    }
    let mut indexed: Vec<(u64, String)> = Vec::with_capacity(arr.len());
    let truncated =
        arr.iter().filter(|c| c.get("finish_reason").and_then(Value::as_str) == Some("length")).count() as u32;
    for (pos, c) in arr.iter().enumerate() {
        let index = c.get("index").and_then(Value::as_u64).unwrap_or(pos as u64);
        let Some(msg) = c.get("message") else {
            return Err(format!("choice {pos} has no `message`"));
        };
        indexed.push((index, message_text(msg).map_err(|e| format!("choice {pos}: {e}"))?));
    }
    indexed.sort_by_key(|(i, _)| *i);
    let usage = v.get("usage");
    let tokens = |k: &str| usage.and_then(|u| u.get(k)).and_then(Value::as_u64).unwrap_or(0);
    Ok(Completion {
        choices: indexed.into_iter().map(|(_, t)| t).collect(),
        usage: Usage { prompt_tokens: tokens("prompt_tokens"), completion_tokens: tokens("completion_tokens") },
        truncated,
    })
}

/// The text of a message: a string, a list of text parts, or (when the model
/// refused under a schema) the refusal. Anything else (`null` without a
/// refusal, a number, an object, an array of non-text values) is an error
/// naming what came instead of text.
fn message_text(msg: &Value) -> Result<String, String> {
    let refusal = || msg.get("refusal").and_then(Value::as_str).map(str::to_string);
    match msg.get("content") {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Array(parts)) => {
            let texts: Vec<&str> = parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect();
            if texts.is_empty() && !parts.is_empty() {
                return Err(format!(
                    "the model answered with an array ({}), expected text",
                    excerpt(&Value::Array(parts.clone()).to_string(), 80)
                ));
            }
            Ok(texts.join(""))
        }
        None | Some(Value::Null) => {
            refusal().ok_or_else(|| "the model answered with null (no content), expected text".to_string())
        }
        Some(other) => {
            let kind = match other {
                Value::Bool(_) => "a boolean",
                Value::Number(_) => "a number",
                _ => "an object",
            };
            Err(format!("the model answered with {kind} ({}), expected text", excerpt(&other.to_string(), 80)))
        }
    }
}

/// The most bytes lucy reads from one LLM or embeddings response: far
/// above any real answer, far below what exhausts memory.
pub const MAX_RESPONSE_BYTES: u64 = 16 * 1024 * 1024;

/// Read a response body, at most `MAX_RESPONSE_BYTES`; a longer one is an
/// error that says so (the rest is not read).
pub fn read_capped(mut r: impl std::io::Read) -> Result<String, String> {
    use std::io::Read as _;
    let mut buf = Vec::new();
    (&mut r)
        .take(MAX_RESPONSE_BYTES + 1)
        .read_to_end(&mut buf)
        .map_err(|e| format!("cannot read the response: {e}"))?;
    if buf.len() as u64 > MAX_RESPONSE_BYTES {
        return Err(format!(
            "the response is larger than {} MiB; lucy stopped reading it",
            MAX_RESPONSE_BYTES / (1024 * 1024)
        ));
    }
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// `text` with every occurrence of `secret` replaced by `<redacted>`. Call it
/// on a server's text before anything cuts, flattens or stores it: cutting
/// first can leave a prefix of the key behind.
pub fn redact(text: &str, secret: Option<&str>) -> String {
    match secret {
        Some(k) if !k.is_empty() && text.contains(k) => text.replace(k, "<redacted>"),
        _ => text.to_string(),
    }
}

/// Whether an error answer says the server does not support the schema
/// (`response_format` / `json_schema`). Any 4xx except auth, not-found and
/// rate limits counts: those are about the request's parameters. A 5xx only
/// counts when its body names the feature (old llama.cpp answers 500).
pub fn is_schema_rejection(status: u16, body: &str) -> bool {
    if matches!(status, 401 | 403 | 404 | 408 | 429) {
        return false;
    }
    let b = body.to_ascii_lowercase();
    let names_it =
        ["response_format", "json_schema", "schema", "grammar", "structured", "guided"].iter().any(|k| b.contains(k));
    (400..500).contains(&status) || names_it
}

/// Whether an error answer says the server only does one choice per request
/// (llama.cpp: "Only one completion choice is allowed", HTTP 500 or 400).
pub fn is_n_rejection(body: &str) -> bool {
    let b = body.to_ascii_lowercase();
    b.contains("completion choice") || b.contains("'n'") || b.contains("\"n\"") || b.contains("`n`")
}

/// At most `max` characters of `s` on one line, for error messages.
pub fn excerpt(s: &str, max: usize) -> String {
    let flat: String = s.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    let flat = flat.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        flat
    } else {
        format!("{}…", flat.chars().take(max).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::Message;

    fn req(schema: Option<Value>) -> ChatRequest {
        ChatRequest {
            phase: "match tables".into(),
            messages: vec![Message::user("hi")],
            temperature: 0.5,
            n: 3,
            response_schema: schema,
            grammar: None,
            max_tokens: None,
        }
    }

    #[test]
    fn a_grammar_goes_in_the_servers_form_and_replaces_the_schema() {
        let g = "start: \"SELECT 1\"";
        let r = ChatRequest { grammar: Some(g.into()), ..req(Some(json!({"type": "array"}))) };
        let (b, _) = request_body("m", &r, 1, Sent::Grammar(GrammarForm::LlamaCpp), None);
        assert_eq!(b["grammar"], format!("%llguidance {{}}\n{g}"));
        assert!(b.get("response_format").is_none() && b.get("structured_outputs").is_none());
        let (b, _) = request_body("m", &r, 1, Sent::Grammar(GrammarForm::Vllm), None);
        assert_eq!(b["structured_outputs"]["grammar"], g);
        assert_eq!(b["guided_grammar"], g);
        assert!(b.get("grammar").is_none() && b.get("response_format").is_none());
        let (b, _) = request_body("m", &r, 1, Sent::Nothing, None);
        assert!(b.get("grammar").is_none() && b.get("guided_grammar").is_none());
    }

    #[test]
    fn body_with_and_without_schema() {
        let (b, wrapped) = request_body("m", &req(None), 3, Sent::Schema, None);
        assert_eq!(b["n"], 3);
        assert!(b.get("response_format").is_none());
        assert!(!wrapped);
        let (b, _) = request_body("m", &req(None), 1, Sent::Nothing, None);
        assert!(b.get("n").is_none());
        let schema = json!({"type": "array", "items": {"enum": ["A", "B"]}});
        let (b, wrapped) = request_body("m", &req(Some(schema.clone())), 1, Sent::Schema, None);
        assert!(wrapped);
        let js = &b["response_format"]["json_schema"];
        assert_eq!(js["name"], "match_tables");
        assert_eq!(js["strict"], true);
        assert_eq!(js["schema"]["properties"]["answer"], schema);
        let (b, _) = request_body("m", &req(Some(schema)), 1, Sent::Nothing, None);
        assert!(b.get("response_format").is_none());
        let obj = json!({"type": "object", "properties": {}});
        let (b, wrapped) = request_body("m", &req(Some(obj.clone())), 1, Sent::Schema, None);
        assert!(!wrapped);
        assert_eq!(b["response_format"]["json_schema"]["schema"], obj);
    }

    #[test]
    fn unwrap() {
        assert_eq!(unwrap_answer(r#"{"answer": ["A", "B"]}"#.into()), r#"["A","B"]"#);
        assert_eq!(unwrap_answer(r#"{"answer": 1, "x": 2}"#.into()), r#"{"answer": 1, "x": 2}"#);
        assert_eq!(unwrap_answer("plain".into()), "plain");
    }

    #[test]
    fn parse_sorted_choices_and_usage() {
        let v = json!({"choices": [
            {"index": 1, "message": {"role": "assistant", "content": "b"}},
            {"index": 0, "message": {"role": "assistant", "content": "a"}}],
            "usage": {"prompt_tokens": 7, "completion_tokens": 2}});
        let c = parse_completion(&v).unwrap();
        assert_eq!(c.choices, vec!["a", "b"]);
        assert_eq!(c.usage, Usage { prompt_tokens: 7, completion_tokens: 2 });
        let v = json!({"choices": [{"message": {"content": [{"type": "text", "text": "x"}, {"text": "y"}]}}]});
        assert_eq!(parse_completion(&v).unwrap().choices, vec!["xy"]);
        assert_eq!(parse_completion(&v).unwrap().usage, Usage::default());
    }

    #[test]
    fn max_tokens_is_sent_and_length_stops_are_counted() {
        let (b, _) = request_body("m", &req(None), 1, Sent::Nothing, Some(64));
        assert_eq!(b["max_tokens"], 64);
        assert!(request_body("m", &req(None), 1, Sent::Nothing, None).0.get("max_tokens").is_none());
        let v = json!({"choices": [
            {"index": 0, "message": {"content": "[\"CLI"}, "finish_reason": "length"},
            {"index": 1, "message": {"content": "[]"}, "finish_reason": "stop"}]});
        assert_eq!(parse_completion(&v).unwrap().truncated, 1);
    }

    #[test]
    fn parse_errors_say_what_is_wrong() {
        assert!(parse_completion(&json!({"foo": 1})).unwrap_err().contains("no `choices`"));
        assert!(parse_completion(&json!({"choices": []})).unwrap_err().contains("empty"));
        assert!(parse_completion(&json!({"choices": [{}]})).unwrap_err().contains("no `message`"));
        assert!(parse_completion(&json!({"error": {"message": "boom"}})).unwrap_err().contains("boom"));
    }

    #[test]
    fn rejections() {
        assert!(is_schema_rejection(400, "response_format not supported"));
        assert!(is_schema_rejection(422, "bad field"));
        assert!(is_schema_rejection(
            500,
            "Illegal param: \"response_format\" must be one of \"text\" or \"json_object\""
        ));
        assert!(!is_schema_rejection(500, "internal error"));
        assert!(!is_schema_rejection(401, "bad key, json_schema"));
        assert!(!is_schema_rejection(429, "slow down"));
        assert!(is_n_rejection(r#"{"error":{"code":500,"message":"Only one completion choice is allowed"}}"#));
        assert!(!is_n_rejection("internal error"));
    }

    #[test]
    fn excerpts_are_short_and_flat() {
        assert_eq!(excerpt("a\n\n b", 10), "a b");
        assert_eq!(excerpt("abcdef", 3), "abc…");
    }
}
