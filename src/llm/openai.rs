//! The OpenAI-compatible chat-completions client (OpenAI, vLLM, Ollama,
//! llama.cpp's server), with retries, a concurrency limit, per-sample
//! fallback for servers that ignore `n`, and structured-output fallback.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use serde_json::Value;

use super::config::{LlmConfig, ServerGrammar, StructuredMode};
use super::retry::{parse_retry_after, retryable_status, Backoff, Limiter};
use super::wire::{self, excerpt, Completion, GrammarForm, Sent};
use super::{ChatModel, ChatRequest, ChatResponse, Usage};
use crate::error::{Error, Result};

/// A chat model served over the OpenAI chat-completions API.
///
/// What the server supports is learned per instance: once it rejects a
/// schema or a grammar (in `--structured auto`) or `n > 1`, later calls stop
/// sending it.
#[derive(Debug)]
pub struct OpenAiClient {
    cfg: LlmConfig,
    http: reqwest::blocking::Client,
    endpoint: String,
    /// `host[:port]` of the server, the only part of the URL errors show.
    host: String,
    limiter: Limiter,
    schema_supported: AtomicBool,
    grammar_supported: AtomicBool,
    /// How this server takes a grammar, if it does (`--llm-grammar`; with
    /// `auto`, asked of the server once, at the first grammar request).
    grammar_form: OnceLock<Option<GrammarForm>>,
    n_supported: AtomicBool,
}

/// Why one HTTP exchange (after its retries) failed.
#[derive(Debug)]
enum CallError {
    Status { status: u16, body: String },
    Timeout,
    Transport(String),
    Garbage(String),
}

impl OpenAiClient {
    /// A client for `cfg`; fails only on an unusable URL or TLS setup.
    pub fn new(cfg: LlmConfig) -> Result<Self> {
        let url = reqwest::Url::parse(&cfg.url).map_err(|e| Error::Input(format!("--llm-url {:?}: {e}", cfg.url)))?;
        let host = match (url.host_str(), url.port()) {
            (Some(h), Some(p)) => format!("{h}:{p}"),
            (Some(h), None) => h.to_string(),
            _ => return Err(Error::Input(format!("--llm-url {:?} has no host", cfg.url))),
        };
        super::tls::install_provider();
        let mut builder = reqwest::blocking::Client::builder()
            .timeout(cfg.timeout)
            .user_agent(concat!("lucy/", env!("CARGO_PKG_VERSION")));
        // A local server (vLLM, Ollama, llama.cpp, the mock) is never behind
        // the HTTP(S)_PROXY a CI machine may set.
        if is_loopback(&url) {
            builder = builder.no_proxy();
        }
        let http = builder.build().map_err(|e| Error::llm("setup", format!("cannot build the HTTP client: {e}")))?;
        Ok(OpenAiClient {
            endpoint: format!("{}/chat/completions", cfg.url.trim_end_matches('/')),
            host,
            limiter: Limiter::new(cfg.concurrency),
            schema_supported: AtomicBool::new(true),
            grammar_supported: AtomicBool::new(true),
            grammar_form: OnceLock::new(),
            n_supported: AtomicBool::new(true),
            http,
            cfg,
        })
    }

    /// The configuration this client was built from.
    pub fn config(&self) -> &LlmConfig {
        &self.cfg
    }

    /// Whether structured output is still sent (false once the server rejected it).
    pub fn schema_supported(&self) -> bool {
        self.schema_supported.load(Ordering::Relaxed)
    }

    /// How this server takes a grammar: from `--llm-grammar`, or (auto) from
    /// the `owned_by` of its `GET /models` answer — `llamacpp` (llama.cpp's
    /// server) or `vllm`; anything else, or no answer within 10 s, gets none.
    pub fn grammar_form(&self) -> Option<GrammarForm> {
        if self.cfg.structured == StructuredMode::Off {
            return None;
        }
        *self.grammar_form.get_or_init(|| match self.cfg.grammar {
            ServerGrammar::Off => None,
            ServerGrammar::LlamaCpp => Some(GrammarForm::LlamaCpp),
            ServerGrammar::Vllm => Some(GrammarForm::Vllm),
            ServerGrammar::Auto => self.ask_server_kind(),
        })
    }

    fn ask_server_kind(&self) -> Option<GrammarForm> {
        let url = format!("{}/models", self.cfg.url.trim_end_matches('/'));
        let mut rb = self.http.get(url).timeout(self.cfg.timeout.min(std::time::Duration::from_secs(10)));
        if let Some(key) = &self.cfg.api_key {
            rb = rb.bearer_auth(key.expose());
        }
        let v: Value = rb.send().ok().filter(|r| r.status().is_success())?.json().ok()?;
        let owners: Vec<&str> = v.get("data")?.as_array()?.iter().filter_map(|m| m.get("owned_by")?.as_str()).collect();
        match owners.first().map(|o| o.to_ascii_lowercase()) {
            Some(o) if o == "llamacpp" || o == "llama.cpp" => Some(GrammarForm::LlamaCpp),
            Some(o) if o == "vllm" => Some(GrammarForm::Vllm),
            _ => None,
        }
    }

    fn backoff(&self) -> Backoff {
        Backoff { base: self.cfg.backoff_base, max: self.cfg.backoff_max }
    }

    /// One logical call: POST with retries on transient failures.
    fn post(&self, body_sent: &Value, attempts: &AtomicU32) -> Result<Value, (CallError, u32)> {
        let mut tries = 0u32;
        loop {
            tries += 1;
            attempts.fetch_add(1, Ordering::Relaxed);
            let (err, retry_after) = match self.post_once(body_sent) {
                Ok(v) => return Ok(v),
                Err(e) => e,
            };
            let transient = match &err {
                CallError::Status { status, body } => {
                    // llama.cpp reports unsupported parameters as 500s: those
                    // will not go away by asking again.
                    let sent_n = body_sent.get("n").is_some();
                    let sent_schema =
                        ["response_format", "grammar", "structured_outputs"].iter().any(|k| body_sent.get(k).is_some());
                    retryable_status(*status)
                        && !(sent_n && wire::is_n_rejection(body))
                        && !(sent_schema && wire::is_schema_rejection(*status, body))
                }
                CallError::Timeout | CallError::Transport(_) => true,
                CallError::Garbage(_) => false,
            };
            if !transient || tries > self.cfg.max_retries {
                return Err((err, tries));
            }
            std::thread::sleep(self.backoff().delay_random(tries - 1, retry_after));
        }
    }

    fn post_once(&self, body: &Value) -> Result<Value, (CallError, Option<std::time::Duration>)> {
        let _permit = self.limiter.acquire();
        let mut rb = self.http.post(&self.endpoint).json(body);
        if let Some(key) = &self.cfg.api_key {
            rb = rb.bearer_auth(key.expose());
        }
        let resp = rb.send().map_err(|e| (transport_error(e), None))?;
        let status = resp.status().as_u16();
        let retry_after = resp.headers().get("retry-after").and_then(|v| v.to_str().ok()).and_then(parse_retry_after);
        // Bounded, and redacted before anything cuts, flattens, parses or
        // stores it: a server may echo the Authorization header anywhere.
        let text = match wire::read_capped(resp) {
            Ok(t) => self.redact(t),
            Err(m) if m.starts_with("cannot read") => return Err((CallError::Transport(m), None)),
            Err(m) => return Err((CallError::Garbage(m), None)),
        };
        if !(200..300).contains(&status) {
            return Err((CallError::Status { status, body: text }, retry_after));
        }
        serde_json::from_str(&text).map_err(|e| {
            (CallError::Garbage(format!("the body is not JSON ({e}); it starts with: {}", excerpt(&text, 200))), None)
        })
    }

    /// One chat-completions call asking for `n` choices.
    fn complete(
        &self,
        req: &ChatRequest,
        n: usize,
        sent: Sent,
        attempts: &AtomicU32,
    ) -> Result<Completion, (CallError, u32)> {
        let (body, wrapped) = wire::request_body(&self.cfg.model, req, n, sent, self.cfg.max_tokens.or(req.max_tokens));
        let v = self.post(&body, attempts)?;
        let mut c = wire::parse_completion(&v).map_err(|m| (CallError::Garbage(m), 1))?;
        if wrapped {
            c.choices = c.choices.into_iter().map(wire::unwrap_answer).collect();
        }
        Ok(c)
    }

    /// `count` separate one-choice calls, at most `concurrency` at a time.
    fn extra_samples(&self, req: &ChatRequest, count: usize, sent: Sent, attempts: &AtomicU32) -> Result<Completion> {
        let next = AtomicUsize::new(0);
        let results: Mutex<Vec<Option<Result<Completion, (CallError, u32)>>>> =
            Mutex::new((0..count).map(|_| None).collect());
        let workers = count.min(self.cfg.concurrency.max(1));
        std::thread::scope(|s| {
            for _ in 0..workers {
                s.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= count {
                        break;
                    }
                    let r = self.complete(req, 1, sent, attempts);
                    if let Ok(mut slots) = results.lock() {
                        slots[i] = Some(r);
                    }
                });
            }
        });
        let slots = results.into_inner().unwrap_or_else(|p| p.into_inner());
        let mut out = Completion { choices: Vec::new(), usage: Usage::default(), truncated: 0 };
        for slot in slots {
            match slot {
                Some(Ok(c)) => {
                    add_usage(&mut out.usage, c.usage);
                    out.truncated += c.truncated.min(1);
                    out.choices.extend(c.choices.into_iter().take(1));
                }
                Some(Err((e, tries))) => return Err(self.error(&req.phase, e, tries, sent != Sent::Nothing)),
                None => return Err(Error::llm(&req.phase, "a sampling thread stopped without an answer")),
            }
        }
        Ok(out)
    }

    /// A clear error: phase (via `Error::Llm`), host, status, body excerpt,
    /// and what to do. Never contains the API key.
    fn error(&self, phase: &str, e: CallError, tries: u32, schema: bool) -> Error {
        let host = &self.host;
        let model = &self.cfg.model;
        let att = if tries == 1 { "1 attempt".to_string() } else { format!("{tries} attempts") };
        let msg = match e {
            CallError::Status { status, body } => {
                let hint = match status {
                    401 | 403 => "check LUCY_API_KEY / OPENAI_API_KEY".to_string(),
                    404 => "check --llm-url (it should end in /v1) and --llm-model".to_string(),
                    _ if schema && wire::is_schema_rejection(status, &body) => {
                        "the server rejected structured output (a schema or grammar); use --structured auto or off, or --llm-grammar off".to_string()
                    }
                    s if retryable_status(s) => format!("the server kept failing; retry later or raise --llm-retries (now {})", self.cfg.max_retries),
                    _ => "the server refused the request".to_string(),
                };
                format!("HTTP {status} from {host} (model {model}) after {att}: {}; {hint}", excerpt(&body, 300))
            }
            CallError::Timeout => format!(
                "no answer from {host} (model {model}) within {:.1}s, {att}; raise --llm-timeout or check the server",
                self.cfg.timeout.as_secs_f64()
            ),
            CallError::Transport(m) => format!(
                "cannot talk to {host} (model {model}), {att}: {m}; check --llm-url and that the server is running"
            ),
            CallError::Garbage(m) => format!("unusable answer from {host} (model {model}): {m}"),
        };
        Error::llm(phase, self.redact(msg))
    }

    /// Servers and proxies sometimes echo request headers in error pages.
    fn redact(&self, s: String) -> String {
        match &self.cfg.api_key {
            Some(k) if !k.expose().is_empty() && s.contains(k.expose()) => wire::redact(&s, Some(k.expose())),
            _ => s,
        }
    }
}

fn is_loopback(url: &reqwest::Url) -> bool {
    match url.host_str() {
        Some(h) => {
            h.eq_ignore_ascii_case("localhost")
                || h.trim_start_matches('[')
                    .trim_end_matches(']')
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback())
        }
        None => false,
    }
}

fn add_usage(total: &mut Usage, u: Usage) {
    total.prompt_tokens += u.prompt_tokens;
    total.completion_tokens += u.completion_tokens;
}

/// Classify a reqwest failure; the message carries the cause chain but no URL.
fn transport_error(e: reqwest::Error) -> CallError {
    if e.is_timeout() {
        return CallError::Timeout;
    }
    let e = e.without_url();
    let mut msg = e.to_string();
    let mut src = std::error::Error::source(&e);
    while let Some(s) = src {
        msg.push_str(": ");
        msg.push_str(&s.to_string());
        src = s.source();
    }
    CallError::Transport(msg)
}

impl ChatModel for OpenAiClient {
    fn chat(&self, req: &ChatRequest) -> Result<ChatResponse> {
        let start = Instant::now();
        let attempts = AtomicU32::new(0);
        let want = req.n.max(1);
        let mode = self.cfg.structured;
        let mut schema = req.response_schema.is_some()
            && match mode {
                StructuredMode::Off => false,
                StructuredMode::On => true,
                StructuredMode::Auto => self.schema_supported.load(Ordering::Relaxed),
            };
        // A grammar, where the server takes one, replaces the schema (it is
        // the stricter constraint, and servers take one constraint at a time).
        let mut grammar = if req.grammar.is_some() && self.grammar_supported.load(Ordering::Relaxed) {
            self.grammar_form()
        } else {
            None
        };
        let sent = |schema: bool, grammar: Option<GrammarForm>| match (grammar, schema) {
            (Some(f), _) => Sent::Grammar(f),
            (None, true) => Sent::Schema,
            (None, false) => Sent::Nothing,
        };
        let mut send_n = if self.n_supported.load(Ordering::Relaxed) { want } else { 1 };
        let (mut schema_dropped, mut grammar_dropped) = (false, false);
        // Each fallback flips one flag, so this loop runs at most four times.
        let first = loop {
            match self.complete(req, send_n, sent(schema, grammar), &attempts) {
                Ok(c) => break c,
                Err((CallError::Status { status, body }, _))
                    if grammar.is_some()
                        && mode == StructuredMode::Auto
                        && wire::is_schema_rejection(status, &body) =>
                {
                    grammar = None;
                    grammar_dropped = true;
                }
                Err((CallError::Status { status, body }, _))
                    if schema
                        && grammar.is_none()
                        && mode == StructuredMode::Auto
                        && wire::is_schema_rejection(status, &body) =>
                {
                    schema = false;
                    schema_dropped = true;
                }
                Err((CallError::Status { body, .. }, _)) if send_n > 1 && wire::is_n_rejection(&body) => {
                    self.n_supported.store(false, Ordering::Relaxed);
                    send_n = 1;
                }
                Err((e, tries)) => {
                    return Err(self.error(&req.phase, e, tries, sent(schema, grammar) != Sent::Nothing))
                }
            }
        };
        // Only now is it clear the schema (grammar) was the problem (a 400
        // for, say, an over-long prompt would have failed again without it).
        if schema_dropped {
            self.schema_supported.store(false, Ordering::Relaxed);
        }
        if grammar_dropped {
            self.grammar_supported.store(false, Ordering::Relaxed);
        }
        // What the request that answered carried; extra samples send the same.
        let answered_with = sent(schema, grammar);
        let Completion { mut choices, mut usage, mut truncated } = first;
        if choices.len() < want {
            let extra = self.extra_samples(req, want - choices.len(), answered_with, &attempts)?;
            choices.extend(extra.choices);
            add_usage(&mut usage, extra.usage);
            truncated += extra.truncated;
        }
        choices.truncate(want);
        Ok(ChatResponse {
            choices,
            usage,
            latency_ms: start.elapsed().as_secs_f64() * 1000.0,
            structured: answered_with != Sent::Nothing,
            requests: attempts.load(Ordering::Relaxed),
            truncated: truncated.min(want as u32),
            local: None,
            cuts: Vec::new(),
            skipped: 0,
        })
    }

    fn model_name(&self) -> String {
        self.cfg.model.clone()
    }

    fn honours_grammar(&self) -> bool {
        self.grammar_supported.load(Ordering::Relaxed) && self.grammar_form().is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts() {
        for (u, want) in [
            ("http://127.0.0.1:8000/v1", true),
            ("http://localhost:11434/v1", true),
            ("http://[::1]:8080/v1", true),
            ("https://api.openai.com/v1", false),
            ("http://10.0.0.5:8000/v1", false),
        ] {
            assert_eq!(is_loopback(&reqwest::Url::parse(u).unwrap()), want, "{u}");
        }
    }
}
