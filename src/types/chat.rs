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
    /// `llm::stop`); they are also counted as cut off
    /// at the token limit (`truncated`), which is what they would have run to.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub looped: u32,
    /// Of `prompt_reused`, tokens restored from a snapshot read from the
    /// disk cache by this call (another process evaluated them).
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub disk_reused: u64,
}

/// serde's `skip_serializing_if` for 64-bit counters that are usually 0.
pub(crate) fn is_zero_u64(n: &u64) -> bool {
    *n == 0
}

/// A sample the decoding backend stopped before it ended by itself
/// (`llm::stop`): which one, why, and what of it is worth showing again.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cut {
    /// Index of the choice.
    pub choice: usize,
    /// `loop` (it repeated itself; see `llm::stop`).
    pub kind: String,
    /// Bytes of the choice's text before the repetition: up to the end of
    /// the repeated span's first copy.
    pub keep: usize,
    /// The repeated span, blanks collapsed (empty when unknown).
    pub span: String,
    /// How many times it was repeated when the sample was stopped.
    pub repeats: u32,
}

impl Cut {
    /// What to tell the model (and the user) about this cut.
    pub fn describe(&self) -> String {
        if self.span.is_empty() {
            "the answer was stopped because it kept repeating itself".to_string()
        } else {
            let span: String = self.span.chars().take(80).collect();
            format!("the answer was stopped because it kept repeating `{span}` ({} times)", self.repeats)
        }
    }
}

/// serde's `skip_serializing_if` for counters that are usually 0.
pub(crate) fn is_zero(n: &u32) -> bool {
    *n == 0
}
