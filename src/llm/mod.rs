//! LLM access behind one small trait, so phases never see HTTP.
//!
//! Backends: an OpenAI-compatible HTTP client (`openai`), record/replay
//! cassettes (`cassette`), and a scripted mock server for tests (`mock`).
//! [`build_chat_model`] turns the `--llm-*` flags ([`LlmArgs`]) into one.
//! See docs/llm.md.

use serde::{Deserialize, Serialize};

use crate::error::Result;

pub mod cassette;
pub mod config;
pub mod mock;
pub mod openai;
pub mod retry;
mod wire;

pub use cassette::{cassette_key, CassetteEntry, Recorder, Replayer};
pub use config::{build_chat_model, ApiKey, LlmArgs, LlmConfig, StructuredMode, NOT_CONFIGURED_HINT};
pub use openai::OpenAiClient;

/// One chat message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// `system`, `user` or `assistant`.
    pub role: String,
    pub content: String,
}

impl Message {
    pub fn system(content: impl Into<String>) -> Self {
        Message { role: "system".into(), content: content.into() }
    }
    pub fn user(content: impl Into<String>) -> Self {
        Message { role: "user".into(), content: content.into() }
    }
}

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
}

/// Token counts reported by the server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

/// The answers to one `ChatRequest`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
}

/// serde's `skip_serializing_if` for counters that are usually 0.
pub(crate) fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A chat-completion backend.
pub trait ChatModel: Send + Sync {
    /// Send one request; return its answers or a clear `Error::Llm`.
    fn chat(&self, req: &ChatRequest) -> Result<ChatResponse>;
    /// Model name, for traces.
    fn model_name(&self) -> String;
}
