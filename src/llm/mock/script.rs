//! What the mock server answers: rules matched on the request, each with a
//! queue of scripted replies. Buildable in Rust or loaded from JSON.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{read_to_string, Error, Result};
use crate::llm::Usage;

/// A mock server script.
///
/// JSON form (every field optional):
/// ```json
/// {
///   "rules": [
///     {"when": {"contains": ["core tables"]},
///      "replies": [{"status": {"code": 429, "retry_after": "0"}},
///                  {"ok": {"choices": ["[\"CLIENT\"]"]}}]}
///   ],
///   "default": {"status": {"code": 500, "body": "no rule"}},
///   "embeddings": {"dim": 16, "vectors": [{"contains": "client", "vector": [1, 0]}]},
///   "max_requests": 10000,
///   "idle_timeout_secs": 600
/// }
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    /// Tried in order; the first whose `when` matches answers.
    #[serde(default)]
    pub rules: Vec<Rule>,
    /// Answer when no rule matches; `None` means HTTP 500 naming the
    /// unmatched message, so a missing rule is loud in tests.
    #[serde(default)]
    pub default: Option<Reply>,
    /// `/v1/embeddings` answers.
    #[serde(default)]
    pub embeddings: Embeddings,
    /// After this many requests the server answers 503 and stops.
    #[serde(default = "default_max_requests")]
    pub max_requests: usize,
    /// Stop after this long without a request (`None`: only on drop/stop).
    #[serde(default)]
    pub idle_timeout_secs: Option<f64>,
    /// `owned_by` of the model `GET /v1/models` lists (default `lucy`):
    /// `llamacpp` or `vllm` makes the client send grammars in that server's form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owned_by: Option<String>,
}

fn default_max_requests() -> usize {
    10_000
}

impl Default for Script {
    fn default() -> Self {
        Script {
            rules: Vec::new(),
            default: None,
            embeddings: Embeddings::default(),
            max_requests: default_max_requests(),
            idle_timeout_secs: None,
            owned_by: None,
        }
    }
}

/// Which requests a rule answers, and with what.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    #[serde(default)]
    pub when: Matcher,
    /// Served in order, one per matching request; the last one repeats.
    pub replies: Vec<Reply>,
}

/// Conditions on a chat request; all given ones must hold. The empty matcher
/// matches everything.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Matcher {
    /// Substrings that must all occur in the last user message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contains: Vec<String>,
    /// Whether the request carries a `response_format`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured: Option<bool>,
    /// Whether the request asks for more than one choice (`n > 1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multi_n: Option<bool>,
    /// Whether the request carries a grammar (`grammar`, `structured_outputs`
    /// or `guided_grammar`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grammar: Option<bool>,
}

/// One scripted answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Reply {
    /// HTTP 200 with choices. With `n` requested, choices are cycled to make
    /// `n` of them, unless `ignore_n` (then exactly one, like Ollama).
    Ok {
        choices: Vec<String>,
        #[serde(default)]
        ignore_n: bool,
        /// Token counts to report; by default about one token per 4 characters.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<Usage>,
    },
    /// Any HTTP status with a body, e.g. 429 with `retry_after`, 500, or 400
    /// "response_format not supported".
    Status {
        code: u16,
        #[serde(default)]
        body: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retry_after: Option<String>,
    },
    /// Wait (to trigger client timeouts), then answer with `then`.
    Delay { ms: u64, then: Box<Reply> },
    /// HTTP 200 with a body that is not a chat completion.
    Malformed { body: String },
    /// Close the connection without answering.
    Close,
}

impl Reply {
    /// 200 with these choices, honouring `n`.
    pub fn ok<S: Into<String>>(choices: impl IntoIterator<Item = S>) -> Reply {
        Reply::Ok { choices: choices.into_iter().map(Into::into).collect(), ignore_n: false, usage: None }
    }
    /// 200 with one choice whatever `n` asks (servers that ignore `n`).
    pub fn ok_ignoring_n(choice: impl Into<String>) -> Reply {
        Reply::Ok { choices: vec![choice.into()], ignore_n: true, usage: None }
    }
    /// An HTTP error status with a body.
    pub fn status(code: u16, body: impl Into<String>) -> Reply {
        Reply::Status { code, body: body.into(), retry_after: None }
    }
    /// 429 with a `Retry-After` header (seconds).
    pub fn rate_limited(retry_after_secs: f64) -> Reply {
        Reply::Status {
            code: 429,
            body: r#"{"error":{"message":"rate limited"}}"#.into(),
            retry_after: Some(retry_after_secs.to_string()),
        }
    }
    /// Sleep `ms`, then answer `then`.
    pub fn delay(ms: u64, then: Reply) -> Reply {
        Reply::Delay { ms, then: Box::new(then) }
    }
    /// 200 with a body that is not a chat completion.
    pub fn malformed(body: impl Into<String>) -> Reply {
        Reply::Malformed { body: body.into() }
    }
}

impl Rule {
    /// A rule for requests whose last user message contains all of `subs`.
    pub fn when_contains<S: Into<String>>(subs: impl IntoIterator<Item = S>) -> Rule {
        Rule {
            when: Matcher { contains: subs.into_iter().map(Into::into).collect(), ..Matcher::default() },
            replies: Vec::new(),
        }
    }
    /// A rule matching every chat request.
    pub fn any() -> Rule {
        Rule { when: Matcher::default(), replies: Vec::new() }
    }
    /// Only requests with (`true`) or without (`false`) a `response_format`.
    pub fn structured(mut self, yes: bool) -> Rule {
        self.when.structured = Some(yes);
        self
    }
    /// Only requests with (`true`) or without (`false`) a grammar.
    pub fn grammar(mut self, yes: bool) -> Rule {
        self.when.grammar = Some(yes);
        self
    }

    /// Only requests with (`true`) or without (`false`) `n > 1`.
    pub fn multi_n(mut self, yes: bool) -> Rule {
        self.when.multi_n = Some(yes);
        self
    }
    /// Append a reply to the queue.
    pub fn reply(mut self, r: Reply) -> Rule {
        self.replies.push(r);
        self
    }
}

impl Script {
    /// An empty script (every chat request gets the default 500).
    pub fn new() -> Script {
        Script::default()
    }
    /// Append a rule.
    pub fn rule(mut self, r: Rule) -> Script {
        self.rules.push(r);
        self
    }
    /// Serve `owner` as the `owned_by` of `GET /v1/models`.
    pub fn owned_by(mut self, owner: impl Into<String>) -> Script {
        self.owned_by = Some(owner.into());
        self
    }
    /// Set the answer for unmatched requests.
    pub fn default_reply(mut self, r: Reply) -> Script {
        self.default = Some(r);
        self
    }
    /// Parse a JSON script; `origin` names it in errors.
    pub fn from_json(text: &str, origin: &str) -> Result<Script> {
        let s: Script = serde_json::from_str(text).map_err(|e| {
            Error::Input(format!("{origin}: not a mock script ({e}); see docs/llm.md, \"Mock server\""))
        })?;
        for (i, r) in s.rules.iter().enumerate() {
            if r.replies.is_empty() {
                return Err(Error::Input(format!("{origin}: $.rules[{i}].replies is empty; give at least one reply")));
            }
        }
        Ok(s)
    }
    /// Load a JSON script file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Script> {
        let path = path.as_ref();
        Script::from_json(&read_to_string(path)?, &path.display().to_string())
    }
}

/// Scripted `/v1/embeddings` answers: the first vector whose `contains`
/// occurs in the input, else a deterministic pseudo-random unit vector of
/// `dim` numbers derived from the text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Embeddings {
    #[serde(default = "default_dim")]
    pub dim: usize,
    #[serde(default)]
    pub vectors: Vec<EmbeddingRule>,
}

impl Default for Embeddings {
    fn default() -> Self {
        Embeddings { dim: default_dim(), vectors: Vec::new() }
    }
}

fn default_dim() -> usize {
    16
}

/// One scripted embedding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmbeddingRule {
    pub contains: String,
    pub vector: Vec<f32>,
}

/// Facts about a chat request that rules match on.
pub(crate) struct RequestFacts<'a> {
    pub last_user: &'a str,
    pub structured: bool,
    pub grammar: bool,
    pub n: usize,
}

impl<'a> RequestFacts<'a> {
    pub fn of(body: &'a Value) -> Self {
        let last_user = body
            .get("messages")
            .and_then(Value::as_array)
            .and_then(|ms| ms.iter().rev().find(|m| m.get("role").and_then(Value::as_str) == Some("user")))
            .and_then(|m| m.get("content"))
            .and_then(Value::as_str)
            .unwrap_or("");
        RequestFacts {
            last_user,
            structured: body.get("response_format").is_some_and(|v| !v.is_null()),
            grammar: ["grammar", "structured_outputs", "guided_grammar"]
                .iter()
                .any(|k| body.get(k).is_some_and(|v| !v.is_null())),
            n: body.get("n").and_then(Value::as_u64).unwrap_or(1).max(1) as usize,
        }
    }
}

impl Matcher {
    pub(crate) fn matches(&self, f: &RequestFacts) -> bool {
        self.contains.iter().all(|s| f.last_user.contains(s.as_str()))
            && self.structured.is_none_or(|want| want == f.structured)
            && self.multi_n.is_none_or(|want| want == (f.n > 1))
            && self.grammar.is_none_or(|want| want == f.grammar)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_round_trip_and_errors() {
        let text = r#"{"rules": [{"when": {"contains": ["a"], "structured": true},
            "replies": [{"status": {"code": 429, "retry_after": "0"}}, {"ok": {"choices": ["x"]}},
                        {"delay": {"ms": 5, "then": "close"}}, {"malformed": {"body": "<html>"}}]}],
            "default": {"ok": {"choices": ["d"], "ignore_n": true}}, "idle_timeout_secs": 1.5}"#;
        let s = Script::from_json(text, "s.json").unwrap();
        assert_eq!(s.rules[0].replies.len(), 4);
        assert_eq!(s.rules[0].replies[2], Reply::delay(5, Reply::Close));
        assert_eq!(s.max_requests, 10_000);
        let again = Script::from_json(&serde_json::to_string(&s).unwrap(), "x").unwrap();
        assert_eq!(again, s);
        let err = Script::from_json(r#"{"rulez": []}"#, "s.json").unwrap_err().to_string();
        assert!(err.contains("s.json") && err.contains("rulez"), "{err}");
        let err = Script::from_json(r#"{"rules": [{"replies": []}]}"#, "s.json").unwrap_err().to_string();
        assert!(err.contains("$.rules[0].replies"), "{err}");
    }

    #[test]
    fn matching() {
        let body = serde_json::json!({"messages": [{"role": "user", "content": "first"}, {"role": "assistant", "content": "x"},
            {"role": "user", "content": "which core tables?"}], "n": 3});
        let f = RequestFacts::of(&body);
        assert!(Rule::when_contains(["core", "tables"]).when.matches(&f));
        assert!(!Rule::when_contains(["first"]).when.matches(&f));
        assert!(Rule::any().multi_n(true).when.matches(&f));
        assert!(!Rule::any().structured(true).when.matches(&f));
    }
}
