//! The chat messages and token counts the LLM client exchanges, kept here
//! (below `llm`) because traces record them.

use serde::{Deserialize, Serialize};

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

/// Token counts reported by the server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

/// Cost of one call answered by the embedded model (no server reports these).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LocalCost {
    /// Prompt tokens evaluated by this call.
    pub prompt_evaluated: u64,
    /// Prompt tokens reused from the prefix cache (not evaluated again).
    pub prompt_reused: u64,
    /// Wall time of the prompt evaluation.
    pub prefill_ms: f64,
    /// Wall time of generating all samples.
    pub decode_ms: f64,
    /// llama.cpp threads.
    pub threads: u32,
    /// Samples whose text the grammar does not admit: the grammar engine
    /// gave up while decoding them (a mask it could not compute within its
    /// limits), and llama.cpp's sampler then lets every token through. The
    /// guard still decides; this says the grammar did not hold.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unconstrained: u32,
    /// Samples stopped because they repeated themselves (see
    /// `llm::embedded` `LOOP_MIN_TOKENS`); they are also counted as cut off
    /// at the token limit (`truncated`), which is what they would have run to.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub looped: u32,
}

/// serde's `skip_serializing_if` for counters that are usually 0.
pub(crate) fn is_zero(n: &u32) -> bool {
    *n == 0
}
