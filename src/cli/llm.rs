//! The `--llm-*` flags, flattened into every subcommand that talks to an
//! LLM (`lucy ask`, `lucy bench`, `lucy crush`); they parse into the
//! library's plain [`lucy::llm::LlmArgs`].

use std::path::PathBuf;

use lucy::llm::config::{DEFAULT_CONCURRENCY, DEFAULT_RETRIES, DEFAULT_TIMEOUT_SECS};
use lucy::llm::embedded::{DEFAULT_CTX, DEFAULT_PREFIX_CACHE_MB, DEFAULT_SEED};

use super::values::{ServerGrammar, StructuredMode};

/// LLM flags.
#[derive(Debug, Clone, PartialEq, clap::Args)]
pub struct LlmFlags {
    /// Base URL of an OpenAI-compatible API, e.g. http://127.0.0.1:8000/v1 for vLLM
    /// [env: LUCY_LLM_URL, then OPENAI_BASE_URL] [default: https://api.openai.com/v1]
    #[arg(help_heading = "LLM", long = "llm-url", value_name = "URL")]
    pub llm_url: Option<String>,
    /// Model name; setting it (or LUCY_LLM_MODEL) turns the LLM on [env: LUCY_LLM_MODEL]
    #[arg(help_heading = "LLM", long = "llm-model", value_name = "NAME")]
    pub llm_model: Option<String>,
    /// Override the temperature every prompt asks for.
    #[arg(hide = true, help_heading = "LLM", long = "llm-temperature", value_name = "T", value_parser = super::num::temperature)]
    pub llm_temperature: Option<f64>,
    /// Timeout of one HTTP request, in seconds.
    #[arg(hide = true, help_heading = "LLM", long = "llm-timeout", value_name = "SECS", default_value_t = DEFAULT_TIMEOUT_SECS, value_parser = super::num::seconds)]
    pub llm_timeout: f64,
    /// Retries on 429, 5xx, timeouts and connection errors (exponential backoff with jitter).
    #[arg(hide = true, help_heading = "LLM", long = "llm-retries", value_name = "N", default_value_t = DEFAULT_RETRIES, value_parser = super::num::retries)]
    pub llm_retries: u32,
    /// Maximum number of LLM requests in flight at once.
    #[arg(hide = true, help_heading = "LLM", long = "llm-concurrency", value_name = "N", default_value_t = DEFAULT_CONCURRENCY, value_parser = super::num::workers)]
    pub llm_concurrency: usize,
    /// Cap every answer at this many tokens (sent as max_tokens); answers cut off there are flagged in the trace.
    #[arg(hide = true, help_heading = "LLM", long = "llm-max-tokens", value_name = "N", value_parser = super::num::tokens)]
    pub llm_max_tokens: Option<u32>,
    /// Ask for schema-constrained answers: auto (fall back when the server rejects it), on, off.
    #[arg(hide = true, help_heading = "LLM", long, value_enum, value_name = "MODE", default_value_t = StructuredMode::Auto)]
    pub structured: StructuredMode,
    /// How a grammar-constrained answer (QueryView's SQL) is asked of a server:
    /// auto (from the server's GET /models), llama-cpp, vllm, off. See docs/llm.md.
    #[arg(hide = true, help_heading = "LLM", long = "llm-grammar", value_enum, value_name = "FORM", default_value_t = ServerGrammar::Auto)]
    pub llm_grammar: ServerGrammar,
    /// Append every LLM request/response to this JSONL cassette. Prompts it already holds are answered from it
    /// (only new or changed prompts reach the model); with --replay OLD, writes every call of the run to FILE,
    /// taking the answers OLD holds from it.
    #[arg(hide = true, help_heading = "LLM", long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Answer every LLM request from this cassette (several joined by commas are read as one), with no network.
    #[arg(hide = true, help_heading = "LLM", long, value_name = "FILE")]
    pub replay: Option<PathBuf>,
    /// Run this GGUF chat model in-process (llama.cpp) instead of calling a server
    /// [env: LUCY_LLM_GGUF] [default: the model scripts/fetch-model.sh fetches, when present]
    #[arg(help_heading = "LLM", long = "llm-gguf", value_name = "FILE", conflicts_with = "llm_model")]
    pub llm_gguf: Option<PathBuf>,
    /// Refuse to load the GGUF file unless its SHA-256 is this (the default model is always checked)
    #[arg(hide = true, help_heading = "LLM", long = "llm-gguf-sha256", value_name = "HEX")]
    pub llm_gguf_sha256: Option<String>,
    /// Embedded model: llama.cpp threads, fixed [env: LUCY_LLM_THREADS, a number or `auto`] [default: auto: one per generated token, every core for prompts and batched steps, see docs/llm.md]
    #[arg(hide = true, help_heading = "LLM", long = "llm-threads", value_name = "N")]
    pub llm_threads: Option<usize>,
    /// Embedded model: context size in tokens (the prompt being answered and its samples share it)
    #[arg(hide = true, help_heading = "LLM", long = "llm-ctx", value_name = "TOKENS", default_value_t = DEFAULT_CTX)]
    pub llm_ctx: u32,
    /// Embedded model: seed of the samplers (sample i of a request is seeded from it and i)
    #[arg(hide = true, help_heading = "LLM", long = "llm-seed", value_name = "N", default_value_t = DEFAULT_SEED)]
    pub llm_seed: u64,
    /// Embedded model: evaluate every prompt in full (no prompt-prefix cache); for measuring the cache
    #[arg(hide = true, help_heading = "LLM", long = "llm-no-prefix-cache")]
    pub llm_no_prefix_cache: bool,
    /// Embedded model: host memory the prompt-prefix cache's KV snapshots may take (least recently used dropped first)
    #[arg(hide = true, help_heading = "LLM", long = "llm-prefix-cache-mb", value_name = "MIB", default_value_t = DEFAULT_PREFIX_CACHE_MB)]
    pub llm_prefix_cache_mb: usize,
    /// Embedded model: do not keep prompt-prefix snapshots on disk between runs (under the cache directory, `prefix/`)
    #[arg(long = "llm-no-prefix-disk")]
    pub llm_no_prefix_disk: bool,
    /// Embedded model: disk space the prompt-prefix snapshots may take (least recently used deleted first)
    #[arg(long = "llm-prefix-disk-mb", value_name = "MIB", default_value_t = lucy::llm::embedded::disk::DEFAULT_DISK_MB)]
    pub llm_prefix_disk_mb: usize,
}

impl LlmFlags {
    /// The library's settings these flags describe.
    pub fn to_args(&self) -> lucy::llm::LlmArgs {
        lucy::llm::LlmArgs {
            llm_url: self.llm_url.clone(),
            llm_model: self.llm_model.clone(),
            llm_temperature: self.llm_temperature,
            llm_timeout: self.llm_timeout,
            llm_retries: self.llm_retries,
            llm_concurrency: self.llm_concurrency,
            llm_max_tokens: self.llm_max_tokens,
            structured: self.structured.into(),
            llm_grammar: self.llm_grammar.into(),
            record: self.record.clone(),
            replay: self.replay.clone(),
            llm_gguf: self.llm_gguf.clone(),
            llm_gguf_sha256: self.llm_gguf_sha256.clone(),
            llm_threads: self.llm_threads,
            llm_ctx: self.llm_ctx,
            llm_seed: self.llm_seed,
            llm_no_prefix_cache: self.llm_no_prefix_cache,
            llm_prefix_cache_mb: self.llm_prefix_cache_mb,
            prefix_disk: lucy::llm::embedded::disk::DiskCacheSettings {
                enabled: !self.llm_no_prefix_disk,
                mb: self.llm_prefix_disk_mb,
                dir: None,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        llm: LlmFlags,
    }

    #[test]
    fn flags_parse_into_library_settings() {
        let t = T::try_parse_from(["t", "--llm-model", "m", "--structured", "off", "--llm-timeout", "2.5"]).unwrap();
        let a = t.llm.to_args();
        assert_eq!(a.structured, lucy::llm::StructuredMode::Off);
        assert_eq!(a.llm_timeout, 2.5);
        assert_eq!(a.llm_model.as_deref(), Some("m"));
        // No flags: exactly the library's defaults.
        let d = T::try_parse_from(["t"]).unwrap();
        assert_eq!(d.llm.to_args(), lucy::llm::LlmArgs::default());
        // --replay OLD --record NEW copies a run's calls into a new cassette.
        assert!(T::try_parse_from(["t", "--record", "a", "--replay", "b"]).is_ok());
    }
}
