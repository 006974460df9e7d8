//! LLM access behind one small trait, so phases never see HTTP.
//!
//! Backends: an OpenAI-compatible HTTP client (`openai`), a GGUF model run
//! in-process by llama.cpp (`embedded`), record/replay cassettes
//! (`cassette`), and a scripted mock server for tests (`mock`).
//! [`build_chat_model`] turns the `--llm-*` flags ([`LlmArgs`]) into one.
//! See docs/llm.md.

use serde::{Deserialize, Serialize};

use crate::error::Result;

pub mod cassette;
pub mod config;
pub mod embedded;
pub mod factory;
#[cfg(test)]
pub(crate) mod fake;
pub mod mock;
pub mod openai;
pub mod retry;
pub mod stop;
pub mod tls;
pub mod traced;
mod wire;
pub use wire::{parse_completion, read_capped, redact, Completion, MAX_RESPONSE_BYTES};

use crate::types::chat::is_zero;
pub use crate::types::chat::{Cut, LocalCost, Message, Usage};
pub use cassette::{cassette_key, CassetteEntry, Recorder, Replayer};
pub use config::{ApiKey, LlmArgs, LlmConfig, ServerGrammar, StructuredMode, NOT_CONFIGURED_HINT};
pub use factory::{build_chat_model, build_chat_model_with_env};
pub use openai::OpenAiClient;

/// A chat-completion request as the phases see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// Which phase/prompt asks (e.g. `match_tables`, `pattern_children`,
    /// `attributes`, `query_view`); used in traces, cassette misses and errors.
    pub phase: String,
    pub messages: Vec<Message>,
    pub temperature: f64,
    /// Number of sampled answers wanted.
    pub n: usize,
    /// JSON Schema the answer must follow, when structured output is wanted
    /// (e.g. an array whose items are an enum of valid table names).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_schema: Option<serde_json::Value>,
    /// A Lark grammar (llguidance dialect) the answer must match, e.g. SQL
    /// over one view's columns. Backends that can constrain decoding use it
    /// (it wins over `response_schema`); the others ignore it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grammar: Option<String>,
    /// The phase's cap on each answer's length, in tokens, used when the
    /// user set none (`--llm-max-tokens` wins). Not part of the cassette
    /// key: it changes an answer only where it cuts it, which the recorded
    /// `truncated` count shows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
}

/// What constrains an answer's tokens.
#[derive(Debug, Clone, PartialEq)]
pub enum Constraint {
    /// A JSON Schema (`response_schema`).
    JsonSchema(serde_json::Value),
    /// A Lark grammar (`grammar`).
    Lark(String),
}

impl ChatRequest {
    /// One greedy answer (temperature 0, `n` 1) to `prompt` as a single user
    /// message, unconstrained and with no length cap of its own: the
    /// seed methods' free-text calls and table descriptions.
    pub fn greedy(phase: &str, prompt: String) -> Self {
        ChatRequest {
            phase: phase.into(),
            messages: vec![Message::user(prompt)],
            temperature: 0.0,
            n: 1,
            response_schema: None,
            grammar: None,
            max_tokens: None,
        }
    }

    /// The constraint a grammar-capable backend applies: the Lark grammar
    /// when given, else the JSON Schema.
    pub fn constraint(&self) -> Option<Constraint> {
        match (&self.grammar, &self.response_schema) {
            (Some(g), _) => Some(Constraint::Lark(g.clone())),
            (None, Some(s)) => Some(Constraint::JsonSchema(s.clone())),
            (None, None) => None,
        }
    }
}

/// The answers to one `ChatRequest`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    /// One text per sample (may be fewer than requested if the server
    /// returned fewer).
    pub choices: Vec<String>,
    pub usage: Usage,
    /// Wall time of the call(s), in milliseconds.
    pub latency_ms: f64,
    /// Whether the answer was produced under `response_schema`
    /// (false when structured output was off or the server rejected it).
    pub structured: bool,
    /// Number of HTTP requests made (retries and per-sample fallbacks count).
    pub requests: u32,
    /// How many choices the server cut off at the token limit
    /// (`finish_reason: length`); such answers are usually unparseable.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub truncated: u32,
    /// Prefill/decode cost, from the embedded backend.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local: Option<LocalCost>,
    /// Samples the backend stopped because they repeated themselves
    /// (`stop`): where each may be cut and what it repeated. Only the
    /// embedded model reports them; they are also counted in `truncated`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cuts: Vec<Cut>,
    /// Samples not decoded because the caller's vote was decided without
    /// them ([`ChatModel::chat_until`]); `choices` holds `n - skipped`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub skipped: u32,
}

/// What a backend's error says when a prompt does not fit its context
/// (the embedded engine's wording; [`is_context_overflow`]).
pub const CONTEXT_OVERFLOW: &str = "more than the context of";

/// Whether `e` is an LLM error for a prompt longer than the model's
/// context: the caller may shorten the prompt and ask again.
pub fn is_context_overflow(e: &crate::error::Error) -> bool {
    matches!(e, crate::error::Error::Llm { message, .. } if message.contains(CONTEXT_OVERFLOW))
}

/// What [`ChatModel::chat_until`] asks about the answers so far: the
/// smallest first batch worth asking after, and whether those answers
/// decide the caller's result.
pub struct Decider<'a> {
    /// Samples to decode before asking (fewer than the request's `n`).
    pub first: usize,
    /// Whether these answers (the first samples, in order) decide.
    pub decided: &'a (dyn Fn(&[String]) -> bool + Sync),
}

/// A chat-completion backend.
pub trait ChatModel: Send + Sync {
    /// Send one request; return its answers or a clear `Error::Llm`.
    fn chat(&self, req: &ChatRequest) -> Result<ChatResponse>;
    /// [`Self::chat`] for a request whose caller may not need every sample:
    /// a backend that decodes samples itself may decode a first batch, ask
    /// `decided` about the answers so far, and stop when it says the rest
    /// cannot change the caller's result (adaptive consistency; sample `i`
    /// keeps its seed, so the answers given are the ones a full request
    /// gives). The response then holds fewer choices and says how many were
    /// `skipped`. The request itself (and so a cassette key) is unchanged;
    /// backends that cannot stop early answer every sample (the default).
    fn chat_until(&self, req: &ChatRequest, decided: &Decider<'_>) -> Result<ChatResponse> {
        let _ = decided;
        self.chat(req)
    }
    /// Model name, for traces.
    fn model_name(&self) -> String;
    /// Whether answers follow `ChatRequest::grammar` (so it belongs in the
    /// cassette key). Backends that ignore the grammar keep the default.
    fn honours_grammar(&self) -> bool {
        false
    }
    /// The requests this model failed to answer from a recording (replay
    /// misses) so far, as their error messages in the order they happened;
    /// `lucy bench --replay` asks it whether a run reproduced its
    /// recording. Models that replay nothing keep the default (none);
    /// wrappers pass their inner model's on.
    fn replay_misses(&self) -> Vec<String> {
        Vec::new()
    }
}
