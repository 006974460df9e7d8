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
pub mod factory;
pub mod mock;
pub mod openai;
pub mod retry;
pub mod traced;
#[cfg(test)]
pub(crate) mod fake;
mod wire;
pub use wire::{parse_completion, read_capped, redact, Completion, MAX_RESPONSE_BYTES};

pub use cassette::{cassette_key, CassetteEntry, Recorder, Replayer};
pub use config::{ApiKey, LlmArgs, LlmConfig, StructuredMode, NOT_CONFIGURED_HINT};
pub use factory::{build_chat_model, build_chat_model_with_env};
pub use openai::OpenAiClient;
pub use crate::types::chat::{Message, Usage};
use crate::types::chat::is_zero;

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

/// A chat-completion backend.
pub trait ChatModel: Send + Sync {
    /// Send one request; return its answers or a clear `Error::Llm`.
    fn chat(&self, req: &ChatRequest) -> Result<ChatResponse>;
    /// Model name, for traces.
    fn model_name(&self) -> String;
}
