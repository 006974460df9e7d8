//! How an LLM is configured: the settings behind the `--llm-*` flags
//! ([`LlmArgs`]), environment variables, and the client configuration
//! ([`LlmConfig`]) they resolve to. Turning a configuration into a
//! [`ChatModel`](super::ChatModel) is `super::factory`'s job.
//!
//! "Configured" means: an LLM model name is given (`--llm-model` or
//! `LUCY_LLM_MODEL`), a cassette is replayed (`--replay FILE`), a GGUF file
//! is named (`--llm-gguf` or `LUCY_LLM_GGUF`), or the embedded default
//! model is present (`scripts/fetch-model.sh` puts it in
//! `~/.cache/lucy/models`). Anything else is "not configured" and
//! [`build_chat_model`](super::build_chat_model) returns `Ok(None)`; callers
//! print [`NOT_CONFIGURED_HINT`].

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::embedded::{self, EmbeddedOptions};
use crate::error::{Error, Result};

/// Default base URL of the OpenAI-compatible API.
pub const DEFAULT_URL: &str = "https://api.openai.com/v1";
/// Environment variable holding the model name when `--llm-model` is absent.
pub const ENV_MODEL: &str = "LUCY_LLM_MODEL";
/// Environment variable holding the base URL when `--llm-url` is absent.
pub const ENV_URL: &str = "LUCY_LLM_URL";
/// The OpenAI SDKs' base-URL variable, used after `LUCY_LLM_URL`.
pub const ENV_OPENAI_URL: &str = "OPENAI_BASE_URL";
/// Environment variable naming a GGUF chat model for the embedded backend
/// when `--llm-gguf` is absent; `off` disables the embedded default.
pub const ENV_GGUF: &str = "LUCY_LLM_GGUF";
/// Environment variable holding the embedded model's thread count.
pub const ENV_THREADS: &str = "LUCY_LLM_THREADS";
/// API key variables, in order of precedence.
pub const ENV_KEYS: [&str; 2] = ["LUCY_API_KEY", "OPENAI_API_KEY"];

/// What `lucy` prints when a command needs an LLM and none is configured.
pub const NOT_CONFIGURED_HINT: &str = "no LLM configured: pass --llm-model NAME (plus --llm-url URL for a \
local server such as vLLM, Ollama or llama.cpp) or set LUCY_LLM_MODEL; the API key, if the server needs \
one, comes from LUCY_API_KEY or OPENAI_API_KEY; or pass --replay FILE to answer from a recorded cassette \
or run scripts/fetch-model.sh once to get the embedded default model (Qwen2.5-Coder-1.5B-Instruct, 1.1 GB, \
run in-process), or pass --llm-gguf FILE.gguf (see docs/llm.md)";

/// Whether to ask the server for schema-constrained (structured) output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StructuredMode {
    /// Send the schema; if the server rejects it, retry without and stop
    /// sending it to that server.
    #[default]
    Auto,
    /// Send the schema; a rejection is an error.
    On,
    /// Never send the schema; answers are parsed from free text.
    Off,
}

/// How a grammar (a `ChatRequest::grammar`, llguidance's Lark dialect) is
/// sent to a server (`--llm-grammar`). Only servers that decode with a
/// grammar engine take one: llama.cpp's server built with LLGuidance
/// (`"grammar": "%llguidance {}\n…"`) and vLLM (`structured_outputs.grammar`,
/// and the older `guided_grammar`). A server that rejects it, in
/// `--structured auto`, gets the request again without it and no grammar
/// after that; the guard stays the last word either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ServerGrammar {
    /// Ask the server who it is (`GET /models`, `owned_by`: `llamacpp` or
    /// `vllm`) once, and send the grammar in its form; other servers get none.
    #[default]
    Auto,
    /// llama.cpp's server (built with `LLAMA_LLGUIDANCE`).
    LlamaCpp,
    /// vLLM (0.8 or later).
    Vllm,
    /// Never send a grammar.
    Off,
}

/// An API key. Its `Debug` output is redacted and it has no `Display`, so it
/// cannot end up in logs, errors, traces or cassettes by accident.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wrap a key (empty keys are treated as absent by the caller).
    pub fn new(key: impl Into<String>) -> Self {
        ApiKey(key.into())
    }

    /// The key from `LUCY_API_KEY`, else `OPENAI_API_KEY`, ignoring empty values.
    pub fn from_env() -> Option<Self> {
        key_from(&|k| std::env::var(k).ok())
    }

    /// The secret itself; only the HTTP layer and redaction use it.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

fn key_from(env: &dyn Fn(&str) -> Option<String>) -> Option<ApiKey> {
    ENV_KEYS.iter().find_map(|k| env(k).filter(|v| !v.trim().is_empty()).map(|v| ApiKey(v.trim().to_string())))
}

/// Everything the OpenAI-compatible client needs.
#[derive(Debug, Clone)]
pub struct LlmConfig {
    /// Base URL, up to and including `/v1` (the client appends `/chat/completions`).
    pub url: String,
    /// Model name sent in every request.
    pub model: String,
    /// Bearer token; `None` for local servers that need none.
    pub api_key: Option<ApiKey>,
    /// Overrides every request's temperature when set.
    pub temperature: Option<f64>,
    /// Per-HTTP-request timeout.
    pub timeout: Duration,
    /// Retries after the first attempt (on 429, 5xx, timeouts, connection errors).
    pub max_retries: u32,
    /// Maximum number of HTTP requests in flight at once.
    pub concurrency: usize,
    /// Structured-output mode.
    pub structured: StructuredMode,
    /// How grammars are sent (`--llm-grammar`); `structured` off sends none.
    pub grammar: ServerGrammar,
    /// First backoff delay; doubles per retry, with jitter.
    pub backoff_base: Duration,
    /// Cap on one backoff sleep, including a server's `Retry-After`.
    pub backoff_max: Duration,
    /// `max_tokens` sent with every request; `None` leaves it to the server.
    pub max_tokens: Option<u32>,
}

impl LlmConfig {
    /// A config with the defaults of the command line for `model` at `url`.
    pub fn new(url: impl Into<String>, model: impl Into<String>) -> Self {
        LlmConfig {
            url: url.into(),
            model: model.into(),
            api_key: None,
            temperature: None,
            timeout: Duration::from_secs_f64(DEFAULT_TIMEOUT_SECS),
            max_retries: DEFAULT_RETRIES,
            concurrency: DEFAULT_CONCURRENCY,
            structured: StructuredMode::Auto,
            grammar: ServerGrammar::Auto,
            backoff_base: Duration::from_millis(500),
            backoff_max: Duration::from_secs(30),
            max_tokens: None,
        }
    }
}

/// Default timeout of one HTTP request, in seconds (`--llm-timeout`).
pub const DEFAULT_TIMEOUT_SECS: f64 = 180.0;
/// Default retries after the first attempt (`--llm-retries`).
pub const DEFAULT_RETRIES: u32 = 4;
/// Default number of requests in flight (`--llm-concurrency`).
pub const DEFAULT_CONCURRENCY: usize = 4;

/// The LLM settings of every command that talks to an LLM (`lucy ask`,
/// `lucy bench`, `lucy crush`): the values of the `--llm-*` flags, which
/// the binary parses into this plain struct.
#[derive(Debug, Clone, PartialEq)]
pub struct LlmArgs {
    /// Base URL of an OpenAI-compatible API, e.g. http://127.0.0.1:8000/v1 for vLLM
    /// [env: LUCY_LLM_URL, then OPENAI_BASE_URL] [default: https://api.openai.com/v1]
    pub llm_url: Option<String>,
    /// Model name; setting it (or LUCY_LLM_MODEL) turns the LLM on [env: LUCY_LLM_MODEL]
    pub llm_model: Option<String>,
    /// Override the temperature every prompt asks for.
    pub llm_temperature: Option<f64>,
    /// Timeout of one HTTP request, in seconds.
    pub llm_timeout: f64,
    /// Retries on 429, 5xx, timeouts and connection errors (exponential backoff with jitter).
    pub llm_retries: u32,
    /// Maximum number of LLM requests in flight at once.
    pub llm_concurrency: usize,
    /// Cap every answer at this many tokens (sent as max_tokens); answers cut off there are flagged in the trace.
    pub llm_max_tokens: Option<u32>,
    /// Ask for schema-constrained answers: auto (fall back when the server rejects it), on, off.
    pub structured: StructuredMode,
    /// How a grammar-constrained request is sent to a server: auto (by the server's /models answer), llama-cpp, vllm, off.
    pub llm_grammar: ServerGrammar,
    /// Append every LLM request/response to this JSONL cassette; prompts it
    /// already holds are answered from it (incremental recording). With
    /// `replay`, a new cassette of the run's calls (see `build_chat_model`).
    pub record: Option<PathBuf>,
    /// Answer every LLM request from this cassette, with no network.
    pub replay: Option<PathBuf>,
    /// Run this GGUF chat model in-process (llama.cpp) instead of calling a server
    /// [env: LUCY_LLM_GGUF] [default: the model scripts/fetch-model.sh fetches, when present]
    pub llm_gguf: Option<PathBuf>,
    /// Refuse to load the GGUF file unless its SHA-256 is this (the default model is always checked)
    pub llm_gguf_sha256: Option<String>,
    /// Embedded model: llama.cpp threads, fixed [env: LUCY_LLM_THREADS, a number or `auto`] [default: auto: one per generated token, every core for prompts and batched steps, see docs/llm.md]
    pub llm_threads: Option<usize>,
    /// Embedded model: context size in tokens (the prompt being answered and its samples share it)
    pub llm_ctx: u32,
    /// Embedded model: seed of the samplers (sample i of a request is seeded from it and i)
    pub llm_seed: u64,
    /// Embedded model: evaluate every prompt in full (no prompt-prefix cache); for measuring the cache
    pub llm_no_prefix_cache: bool,
    /// Embedded model: host memory the prompt-prefix cache may take, in MiB
    pub llm_prefix_cache_mb: usize,
    /// Embedded model: the prompt-prefix snapshots kept on disk between
    /// processes (`embedded::disk`).
    pub prefix_disk: embedded::disk::DiskCacheSettings,
}

impl Default for LlmArgs {
    fn default() -> Self {
        LlmArgs {
            llm_url: None,
            llm_model: None,
            llm_temperature: None,
            llm_timeout: DEFAULT_TIMEOUT_SECS,
            llm_retries: DEFAULT_RETRIES,
            llm_concurrency: DEFAULT_CONCURRENCY,
            llm_max_tokens: None,
            structured: StructuredMode::Auto,
            llm_grammar: ServerGrammar::Auto,
            record: None,
            replay: None,
            llm_gguf: None,
            llm_gguf_sha256: None,
            llm_threads: None,
            llm_ctx: embedded::DEFAULT_CTX,
            llm_seed: embedded::DEFAULT_SEED,
            llm_no_prefix_cache: false,
            llm_prefix_cache_mb: embedded::DEFAULT_PREFIX_CACHE_MB,
            prefix_disk: embedded::disk::DiskCacheSettings::default(),
        }
    }
}

/// Which GGUF file the flags select for the embedded backend.
#[derive(Debug, Clone, PartialEq)]
pub struct GgufChoice {
    pub options: EmbeddedOptions,
    /// Whether it is the default model (found, not named).
    pub is_default: bool,
    /// What to tell the user when the file is unusable.
    pub fix: String,
}

impl LlmArgs {
    /// Whether an LLM is configured (see the module docs), reading the
    /// process environment.
    pub fn is_configured(&self) -> bool {
        let env = |k: &str| std::env::var(k).ok();
        self.replay.is_some() || self.model_from(&env).is_some() || matches!(self.gguf_from(&env), Ok(Some(_)))
    }

    /// The embedded model these flags select, if any: `--llm-gguf`, else
    /// (with no model name given) `LUCY_LLM_GGUF`, else the default model
    /// when its file is present. `None` when an endpoint is configured.
    pub fn gguf_from(&self, env: &dyn Fn(&str) -> Option<String>) -> Result<Option<GgufChoice>> {
        let named = match &self.llm_gguf {
            Some(p) => Some(p.clone()),
            None if self.model_from(env).is_some() => return Ok(None),
            None => match nonempty(env(ENV_GGUF)) {
                Some(v) if v.eq_ignore_ascii_case("off") || v.eq_ignore_ascii_case("none") => return Ok(None),
                v => v.map(PathBuf::from),
            },
        };
        let (path, is_default, fix) = match named {
            Some(p) => (p, false, "pass a GGUF chat model file with --llm-gguf (or LUCY_LLM_GGUF)".to_string()),
            None => match embedded::default_model_path(env) {
                Some(p) if p.exists() => (p, true, format!("{} to fetch it again", embedded::FETCH_HINT)),
                _ => return Ok(None),
            },
        };
        if self.llm_ctx < 512 {
            return Err(Error::Input(format!("--llm-ctx must be at least 512 tokens, got {}", self.llm_ctx)));
        }
        if self.llm_max_tokens == Some(0) {
            return Err(Error::Input("--llm-max-tokens must be at least 1 (leave it out for the default)".into()));
        }
        // A number fixes the threads; none (or `auto` in the environment)
        // keeps the adaptive default (docs/llm.md, *Threads*).
        let (threads, auto_threads) = match self.llm_threads {
            Some(t) => (t, false),
            None => match nonempty(env(ENV_THREADS)) {
                Some(v) if v.trim().eq_ignore_ascii_case("auto") => (embedded::default_threads(), true),
                Some(v) => (
                    v.trim().parse().map_err(|_| {
                        Error::Input(format!("{ENV_THREADS}={v:?} is not a number of threads (or `auto`)"))
                    })?,
                    false,
                ),
                None => (embedded::default_threads(), true),
            },
        };
        if threads == 0 || threads > 256 {
            return Err(Error::Input(format!("--llm-threads must be between 1 and 256, got {threads}")));
        }
        let sha256 = match (&self.llm_gguf_sha256, is_default) {
            (Some(h), _) => {
                let h = h.trim().to_ascii_lowercase();
                if h.len() != 64 || !h.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return Err(Error::Input(format!("--llm-gguf-sha256 must be 64 hex digits, got {:?}", h)));
                }
                Some(h)
            }
            (None, true) => Some(embedded::DEFAULT_MODEL_SHA256.to_string()),
            (None, false) => None,
        };
        let mut options = EmbeddedOptions::new(path);
        options.sha256 = sha256;
        options.threads = threads;
        options.auto_threads = auto_threads;
        options.n_ctx = self.llm_ctx;
        options.seed = self.llm_seed;
        options.prefix_cache = !self.llm_no_prefix_cache;
        options.prefix_cache_mb = self.llm_prefix_cache_mb;
        if self.prefix_disk.enabled && !self.llm_no_prefix_cache {
            options.disk_cache = self.prefix_disk.dir.clone().or_else(|| embedded::disk::default_dir(env));
        }
        options.disk_cache_mb = self.prefix_disk.mb;
        Ok(Some(GgufChoice { options, is_default, fix }))
    }

    pub(crate) fn model_from(&self, env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
        nonempty(self.llm_model.clone()).or_else(|| nonempty(env(ENV_MODEL)))
    }

    /// The client configuration these flags describe, with `env` standing in
    /// for the process environment. `None` when no model is named.
    pub fn to_config(&self, env: &dyn Fn(&str) -> Option<String>) -> Result<Option<LlmConfig>> {
        let Some(model) = self.model_from(env) else { return Ok(None) };
        let url = nonempty(self.llm_url.clone())
            .or_else(|| nonempty(env(ENV_URL)))
            .or_else(|| nonempty(env(ENV_OPENAI_URL)))
            .unwrap_or_else(|| DEFAULT_URL.into());
        let parsed = reqwest::Url::parse(&url).map_err(|e| {
            Error::Input(format!("--llm-url {url:?} is not a URL ({e}); e.g. http://127.0.0.1:8000/v1"))
        })?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(Error::Input(format!("--llm-url {url:?} must start with http:// or https://")));
        }
        if !(self.llm_timeout.is_finite() && self.llm_timeout > 0.0) {
            return Err(Error::Input(format!(
                "--llm-timeout must be a positive number of seconds, got {}",
                self.llm_timeout
            )));
        }
        if self.llm_concurrency == 0 {
            return Err(Error::Input("--llm-concurrency must be at least 1".into()));
        }
        if self.llm_max_tokens == Some(0) {
            return Err(Error::Input(
                "--llm-max-tokens must be at least 1 (leave it out to let the server decide)".into(),
            ));
        }
        if let Some(t) = self.llm_temperature {
            if !(t.is_finite() && (0.0..=2.0).contains(&t)) {
                return Err(Error::Input(format!("--llm-temperature must be between 0 and 2, got {t}")));
            }
        }
        let api_key = key_from(env);
        if api_key.is_none() && parsed.host_str() == Some("api.openai.com") {
            return Err(Error::Input(
                "api.openai.com needs an API key: set LUCY_API_KEY or OPENAI_API_KEY, or point --llm-url at a local server".into(),
            ));
        }
        let mut cfg = LlmConfig::new(url.trim_end_matches('/'), model);
        cfg.api_key = api_key;
        cfg.temperature = self.llm_temperature;
        cfg.timeout = crate::types::limits::duration(
            crate::types::limits::check_seconds("--llm-timeout", self.llm_timeout).map_err(Error::Input)?,
        );
        cfg.max_retries = self.llm_retries;
        cfg.concurrency = self.llm_concurrency;
        cfg.structured = self.structured;
        cfg.grammar = self.llm_grammar;
        cfg.max_tokens = self.llm_max_tokens;
        Ok(Some(cfg))
    }
}

fn nonempty(s: Option<String>) -> Option<String> {
    s.map(|v| v.trim().to_string()).filter(|v| !v.is_empty())
}

/// A fixed environment for tests: `pairs` as (variable, value).
#[cfg(test)]
pub(crate) fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
    move |k| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_default_is_chosen_only_without_an_endpoint() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_str().unwrap().to_string();
        let env_dir = |extra: &'static [(&'static str, &'static str)]| {
            let d = d.clone();
            move |k: &str| {
                if k == "LUCY_MODEL_DIR" {
                    Some(d.clone())
                } else {
                    extra.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
                }
            }
        };
        let args = LlmArgs::default();
        // Absent file: not configured.
        assert!(args.gguf_from(&env_dir(&[])).unwrap().is_none());
        std::fs::write(dir.path().join(embedded::DEFAULT_MODEL_FILE), b"x").unwrap();
        let c = args.gguf_from(&env_dir(&[])).unwrap().unwrap();
        assert!(c.is_default);
        assert_eq!(c.options.sha256.as_deref(), Some(embedded::DEFAULT_MODEL_SHA256));
        assert!(c.fix.contains("scripts/fetch-model.sh"), "{}", c.fix);
        // An endpoint wins; "off" disables the default.
        assert!(args.gguf_from(&env_dir(&[("LUCY_LLM_MODEL", "m")])).unwrap().is_none());
        assert!(args.gguf_from(&env_dir(&[("LUCY_LLM_GGUF", "off")])).unwrap().is_none());
        // A damaged default model is an input error naming the file and the fix.
        let err = crate::llm::build_chat_model_with_env(&args, &env_dir(&[])).err().unwrap();
        assert_eq!(err.exit_code(), 2);
        let msg = err.to_string();
        assert!(msg.contains(embedded::DEFAULT_MODEL_FILE) && msg.contains("fetch-model.sh"), "{msg}");
        // Named files and bad numbers.
        let named = LlmArgs { llm_gguf: Some(dir.path().join("missing.gguf")), ..LlmArgs::default() };
        let err = crate::llm::build_chat_model_with_env(&named, &env_dir(&[])).err().unwrap().to_string();
        assert!(err.contains("missing.gguf") && err.contains("--llm-gguf"), "{err}");
        let bad = LlmArgs { llm_threads: Some(0), ..named.clone() };
        assert!(bad.gguf_from(&env_dir(&[])).unwrap_err().to_string().contains("--llm-threads"));
        // Threads: adaptive by default (and with `auto`), fixed by a number.
        let o = |a: &LlmArgs, env: &'static [(&'static str, &'static str)]| {
            a.gguf_from(&env_dir(env)).unwrap().unwrap().options
        };
        let d = o(&named, &[]);
        assert!(d.auto_threads);
        assert_eq!(d.threads, embedded::default_threads());
        assert!(o(&named, &[("LUCY_LLM_THREADS", "auto")]).auto_threads);
        let env2 = o(&named, &[("LUCY_LLM_THREADS", "2")]);
        assert_eq!((env2.threads, env2.auto_threads), (2, false));
        let flag = o(&LlmArgs { llm_threads: Some(1), ..named.clone() }, &[("LUCY_LLM_THREADS", "auto")]);
        assert_eq!((flag.threads, flag.auto_threads), (1, false), "the flag wins over the environment");
        let err = named.gguf_from(&env_dir(&[("LUCY_LLM_THREADS", "many")])).unwrap_err().to_string();
        assert!(err.contains("LUCY_LLM_THREADS") && err.contains("auto"), "{err}");
        let bad = LlmArgs { llm_gguf_sha256: Some("abc".into()), ..named };
        assert!(bad.gguf_from(&env_dir(&[])).unwrap_err().to_string().contains("64 hex"));
    }

    #[test]
    fn model_from_env_and_flag_precedence() {
        let args = LlmArgs { llm_url: Some("http://127.0.0.1:9/v1/".into()), ..Default::default() };
        let cfg = args.to_config(&env_of(&[("LUCY_LLM_MODEL", "qwen")])).unwrap().unwrap();
        assert_eq!(cfg.model, "qwen");
        assert_eq!(cfg.url, "http://127.0.0.1:9/v1");
        let args = LlmArgs { llm_model: Some("flag".into()), ..args };
        let cfg = args.to_config(&env_of(&[("LUCY_LLM_MODEL", "qwen")])).unwrap().unwrap();
        assert_eq!(cfg.model, "flag");
        let no_url = LlmArgs { llm_url: None, ..args };
        let cfg = no_url.to_config(&env_of(&[("OPENAI_BASE_URL", "http://127.0.0.1:2/v1")])).unwrap().unwrap();
        assert_eq!(cfg.url, "http://127.0.0.1:2/v1");
        static BOTH: [(&str, &str); 2] =
            [("OPENAI_BASE_URL", "http://127.0.0.1:2/v1"), ("LUCY_LLM_URL", "http://127.0.0.1:3/v1")];
        assert_eq!(no_url.to_config(&env_of(&BOTH)).unwrap().unwrap().url, "http://127.0.0.1:3/v1");
    }

    #[test]
    fn key_precedence_and_empty_ignored() {
        let k = key_from(&env_of(&[("LUCY_API_KEY", " "), ("OPENAI_API_KEY", "sk-b")])).unwrap();
        assert_eq!(k.expose(), "sk-b");
        let k = key_from(&env_of(&[("LUCY_API_KEY", "sk-a"), ("OPENAI_API_KEY", "sk-b")])).unwrap();
        assert_eq!(k.expose(), "sk-a");
        assert_eq!(format!("{k:?}"), "ApiKey(<redacted>)");
    }

    #[test]
    fn openai_without_key_is_a_clear_error() {
        let args = LlmArgs { llm_model: Some("gpt-4o".into()), ..Default::default() };
        let err = args.to_config(&env_of(&[])).unwrap_err().to_string();
        assert!(err.contains("LUCY_API_KEY"), "{err}");
    }

    #[test]
    fn bad_flags_are_input_errors() {
        let base = LlmArgs {
            llm_model: Some("m".into()),
            llm_url: Some("http://127.0.0.1:1/v1".into()),
            ..Default::default()
        };
        for (args, needle) in [
            (LlmArgs { llm_url: Some("not a url".into()), ..base.clone() }, "--llm-url"),
            (LlmArgs { llm_url: Some("ftp://x/v1".into()), ..base.clone() }, "http://"),
            (LlmArgs { llm_timeout: 0.0, ..base.clone() }, "--llm-timeout"),
            (LlmArgs { llm_concurrency: 0, ..base.clone() }, "--llm-concurrency"),
            (LlmArgs { llm_temperature: Some(-1.0), ..base.clone() }, "--llm-temperature"),
        ] {
            let err = args.to_config(&env_of(&[])).unwrap_err();
            assert!(matches!(err, Error::Input(_)));
            assert!(err.to_string().contains(needle), "{err}");
        }
    }
}
