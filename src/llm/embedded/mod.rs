//! The embedded chat backend: a GGUF chat model run in-process by llama.cpp
//! (through the `llama-cpp-2` crate), so `lucy ask` answers on a machine
//! with no LLM server. Behind the same [`ChatModel`] trait as the HTTP
//! client; the phases do not know which one they talk to.
//!
//! - the model's own chat template (GGUF metadata) renders the messages;
//! - `n` samples share one prompt evaluation (the evaluated KV sequence is
//!   copied per sample and the samples decode in one batch per step);
//! - a prompt-prefix cache keeps evaluated prompts as host-memory KV
//!   snapshots under a byte budget (`--llm-prefix-cache-mb`), so a prompt
//!   that shares a prefix with an earlier one (the schema part of
//!   `match_tables`, of each table's `attributes` prompt, of `direct_sql`)
//!   evaluates only its new suffix;
//! - grammar-constrained decoding with llguidance: a request's Lark grammar
//!   or JSON Schema ([`ChatRequest::constraint`]) masks every token;
//! - reproducible: sample `i` of a request is seeded from `--llm-seed` and
//!   `i` only.
//!
//! See docs/llm.md.

pub mod disk;
mod engine;
pub mod file;
pub mod prefix;
pub mod threads;

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::Mutex;
use std::thread::JoinHandle;
use std::time::Instant;

use super::{ChatModel, ChatRequest, ChatResponse};
use crate::error::{Error, Result};

pub use engine::SpeedSample;
pub use file::{default_model_path, DEFAULT_MODEL_FILE, DEFAULT_MODEL_SHA256, FETCH_HINT};

/// Default context size in tokens (shared by the cached prompts and the
/// samples being decoded; bounds the KV buffer's memory).
pub const DEFAULT_CTX: u32 = 8192;
/// Default memory budget of the prompt-prefix cache's snapshots, in MiB
/// (about 28 KiB per cached token for the default model, so ~18,700
/// tokens; every DDO and ACME prompt prefix fits, see docs/llm.md).
pub const DEFAULT_PREFIX_CACHE_MB: usize = 512;
/// Default cap on one answer's length when the caller sets none.
pub const DEFAULT_MAX_TOKENS: u32 = 1024;
/// Default seed.
pub const DEFAULT_SEED: u64 = 42;

/// How to run the embedded model.
#[derive(Debug, Clone, PartialEq)]
pub struct EmbeddedOptions {
    /// The GGUF file.
    pub path: PathBuf,
    /// Expected SHA-256 (hex), checked before loading; `None` skips the
    /// check (the default model is always checked).
    pub sha256: Option<String>,
    /// llama.cpp threads (`--llm-threads`): for everything when fixed; with
    /// [`Self::auto_threads`], the most a batch (a prompt evaluation, a step
    /// of several samples) gets.
    pub threads: usize,
    /// The default: single-token steps on one thread, batches on up to
    /// `threads`, dropping to one while batches collapse (`threads.rs`).
    pub auto_threads: bool,
    /// With `auto_threads`: a batched step slower per token than this
    /// multiple of the same call's prompt evaluation per token means the
    /// threads collapsed ([`threads::COLLAPSE_RATIO`]; tests set 0 to force
    /// the back-off).
    pub thread_collapse_ratio: f64,
    /// Context size in tokens.
    pub n_ctx: u32,
    /// Prompt tokens evaluated per llama.cpp batch.
    pub n_batch: u32,
    /// Answer length cap when a request sets none.
    pub max_tokens: u32,
    /// Base seed of the samplers.
    pub seed: u64,
    /// Whether to reuse evaluated prompt prefixes across calls.
    pub prefix_cache: bool,
    /// Host memory the prefix cache's snapshots may take, in MiB.
    pub prefix_cache_mb: usize,
    /// Earley items llguidance may touch to compute one token mask
    /// ([`GRAMMAR_MAX_ITEMS`]). Past it, the grammar stops holding for that
    /// answer (counted as `unconstrained`).
    pub grammar_max_items: usize,
    /// Where the prompt-prefix snapshots are kept between processes
    /// (`disk.rs`; `<cache root>/prefix`); `None` keeps them in memory only.
    pub disk_cache: Option<PathBuf>,
    /// The most the snapshot files may take on disk, in MiB.
    pub disk_cache_mb: usize,
    /// The GGUF's SHA-256, set by [`EmbeddedModel::load`] (the disk cache's key).
    pub model_sha256: Option<String>,
}

/// The default of [`EmbeddedOptions::grammar_max_items`]. llguidance's own
/// default, 50,000, is too few for QueryView's grammar on a real vocabulary:
/// right after `SELECT` over the DDO view (Qwen2.5-Coder's 151k tokens) the
/// mask failed with "Too many items (limit 50000; mask)", and llama-cpp-2's
/// grammar sampler then masks nothing, so the answer was decoded
/// unconstrained. With 500,000 that mask took 6 ms and the costliest mask of
/// DDO Q1's answer 135 ms, on a loaded machine.
pub const GRAMMAR_MAX_ITEMS: usize = 2_000_000;

impl EmbeddedOptions {
    /// Defaults for the model at `path`.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        EmbeddedOptions {
            path: path.into(),
            sha256: None,
            threads: default_threads(),
            auto_threads: true,
            thread_collapse_ratio: threads::COLLAPSE_RATIO,
            n_ctx: DEFAULT_CTX,
            n_batch: 512,
            max_tokens: DEFAULT_MAX_TOKENS,
            seed: DEFAULT_SEED,
            prefix_cache: true,
            prefix_cache_mb: DEFAULT_PREFIX_CACHE_MB,
            grammar_max_items: GRAMMAR_MAX_ITEMS,
            disk_cache: None,
            disk_cache_mb: disk::DEFAULT_DISK_MB,
            model_sha256: None,
        }
    }
}

/// The default thread count for batches: the available cores (at most 8).
/// Single-token steps run on one thread by default; see `threads.rs` and
/// docs/llm.md ("Threads") for the measurements behind both.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 8)
}

enum Job {
    Chat {
        req: ChatRequest,
        max_tokens: Option<u32>,
        /// The number of the first sample (`req.n` samples from there).
        first: usize,
        reply: mpsc::Sender<std::result::Result<engine::Answer, String>>,
    },
    Measure {
        text: String,
        gen: usize,
        n: usize,
        constraint: Option<super::Constraint>,
        reply: mpsc::Sender<std::result::Result<SpeedSample, String>>,
    },
    Stats {
        reply: mpsc::Sender<prefix::CacheStats>,
    },
    Prefill {
        req: ChatRequest,
        reply: mpsc::Sender<std::result::Result<crate::llm::LocalCost, String>>,
    },
}

/// The embedded backend. Loading happens in [`EmbeddedModel::load`]; each
/// request is answered on one worker thread that owns the llama.cpp context
/// (requests from several threads queue up there).
pub struct EmbeddedModel {
    jobs: Mutex<Option<mpsc::Sender<Job>>>,
    worker: Mutex<Option<JoinHandle<()>>>,
    name: String,
    path: PathBuf,
    threads: usize,
    auto_threads: bool,
    max_tokens: Option<u32>,
    constrain: bool,
    /// Whether the "grammar did not hold" warning was printed (once a process).
    warned_unconstrained: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for EmbeddedModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddedModel").field("name", &self.name).field("threads", &self.threads).finish()
    }
}

impl EmbeddedModel {
    /// Check, hash and load the GGUF file; errors name the file and the fix
    /// (`fix`, e.g. "run scripts/fetch-model.sh").
    pub fn load(opts: &EmbeddedOptions, fix: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<Self> {
        let path = opts.path.clone();
        file::check_gguf(&path, fix)?;
        let hash = match &opts.sha256 {
            Some(want) => file::verify_sha256(&path, want, env, fix)?,
            None => file::sha256_cached(&path, env)?,
        };
        let file_name =
            path.file_name().map_or_else(|| path.display().to_string(), |f| f.to_string_lossy().into_owned());
        let name = format!("gguf:{file_name}#sha256:{hash}");
        let (job_tx, job_rx) = mpsc::channel::<Job>();
        let (ready_tx, ready_rx) = mpsc::channel::<std::result::Result<(), String>>();
        let mut worker_opts = opts.clone();
        worker_opts.model_sha256 = Some(hash.clone());
        let worker = std::thread::Builder::new()
            .name("lucy-llm".into())
            .spawn(move || worker(worker_opts, job_rx, ready_tx))
            .map_err(|e| Error::Input(format!("cannot start the model thread: {e}")))?;
        match ready_rx.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                let _ = worker.join();
                return Err(Error::Input(format!("GGUF model {}: {e}; {fix}", path.display())));
            }
            Err(_) => {
                let _ = worker.join();
                return Err(Error::Input(format!(
                    "GGUF model {}: the model thread stopped while loading; {fix}",
                    path.display()
                )));
            }
        }
        Ok(EmbeddedModel {
            jobs: Mutex::new(Some(job_tx)),
            worker: Mutex::new(Some(worker)),
            name,
            path,
            threads: opts.threads,
            auto_threads: opts.auto_threads && opts.threads > 1,
            max_tokens: None,
            constrain: true,
            warned_unconstrained: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// Cap every answer at `max_tokens` (`--llm-max-tokens`).
    pub fn with_max_tokens(mut self, max_tokens: Option<u32>) -> Self {
        self.max_tokens = max_tokens;
        self
    }

    /// Whether to decode under the requests' grammars and JSON Schemas
    /// (`--structured off` turns this off, e.g. to measure what they add).
    pub fn with_constraints(mut self, on: bool) -> Self {
        self.constrain = on;
        self
    }

    /// Raw speed: evaluate `text` (already in the chat template) from
    /// scratch (the prefix cache is emptied), then decode `n` samples of at
    /// most `gen` tokens the way answers are decoded, under `constraint` if
    /// given; timed by lucy and by llama.cpp's own counters (for
    /// `benchmarks/llm_speed.rs`).
    pub fn measure(
        &self,
        text: &str,
        gen: usize,
        n: usize,
        constraint: Option<super::Constraint>,
    ) -> Result<SpeedSample> {
        let (tx, rx) = mpsc::channel();
        {
            let jobs = self.jobs.lock().unwrap_or_else(|p| p.into_inner());
            let Some(jobs) = jobs.as_ref() else {
                return Err(Error::llm("measure", "the embedded model was shut down"));
            };
            jobs.send(Job::Measure { text: text.to_string(), gen, n, constraint, reply: tx })
                .map_err(|_| Error::llm("measure", "the model thread has stopped"))?;
        }
        rx.recv()
            .map_err(|_| Error::llm("measure", "the model thread has stopped"))?
            .map_err(|e| Error::llm("measure", e))
    }

    /// The prompt-prefix cache's counters: snapshots kept, their bytes,
    /// restores and budget evictions so far.
    pub fn cache_stats(&self) -> Result<prefix::CacheStats> {
        let (tx, rx) = mpsc::channel();
        {
            let jobs = self.jobs.lock().unwrap_or_else(|p| p.into_inner());
            let Some(jobs) = jobs.as_ref() else {
                return Err(Error::llm("cache_stats", "the embedded model was shut down"));
            };
            jobs.send(Job::Stats { reply: tx })
                .map_err(|_| Error::llm("cache_stats", "the model thread has stopped"))?;
        }
        rx.recv().map_err(|_| Error::llm("cache_stats", "the model thread has stopped"))
    }

    /// Evaluate `req`'s prompt into the prefix cache (memory and disk)
    /// without answering it: `lucy model warm`.
    pub fn prefill(&self, req: &ChatRequest) -> Result<crate::llm::LocalCost> {
        let (tx, rx) = mpsc::channel();
        {
            let jobs = self.jobs.lock().unwrap_or_else(|p| p.into_inner());
            let Some(jobs) = jobs.as_ref() else {
                return Err(Error::llm(&req.phase, "the embedded model was shut down"));
            };
            jobs.send(Job::Prefill { req: req.clone(), reply: tx })
                .map_err(|_| Error::llm(&req.phase, "the model thread has stopped"))?;
        }
        rx.recv()
            .map_err(|_| Error::llm(&req.phase, "the model thread has stopped"))?
            .map_err(|e| Error::llm(&req.phase, format!("embedded model {}: {e}", self.path.display())))
    }

    /// The model file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Threads: for everything, or with [`Self::auto_threads`] the most a
    /// batch gets.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Whether the thread counts adapt (single-token steps on one thread,
    /// batches on up to [`Self::threads`], backing off under load).
    pub fn auto_threads(&self) -> bool {
        self.auto_threads
    }
}

fn worker(opts: EmbeddedOptions, jobs: mpsc::Receiver<Job>, ready: mpsc::Sender<std::result::Result<(), String>>) {
    let loaded = match engine::load(&opts.path) {
        Ok(l) => l,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let mut eng = match engine::Engine::new(&loaded, &opts) {
        Ok(e) => e,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let _ = ready.send(Ok(()));
    // A panic inside one request must not take the backend down silently.
    let panicked = || "internal error in the embedded model (panic)".to_string();
    while let Ok(job) = jobs.recv() {
        match job {
            Job::Chat { req, max_tokens, first, reply } => {
                let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| eng.chat(&req, max_tokens, first)))
                    .unwrap_or_else(|_| Err(panicked()));
                let _ = reply.send(out);
            }
            Job::Measure { text, gen, n, constraint, reply } => {
                let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    eng.measure(&text, gen, n, constraint.as_ref())
                }))
                .unwrap_or_else(|_| Err(panicked()));
                let _ = reply.send(out);
            }
            Job::Stats { reply } => {
                let _ = reply.send(eng.cache_stats());
            }
            Job::Prefill { req, reply } => {
                let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| eng.prefill(&req)))
                    .unwrap_or_else(|_| Err(panicked()));
                let _ = reply.send(out);
            }
        }
    }
}

impl EmbeddedModel {
    /// Answer samples `first..first + req.n` of `req` on the worker.
    fn answer(&self, req: &ChatRequest, first: usize) -> Result<engine::Answer> {
        let (tx, rx) = mpsc::channel();
        {
            let jobs = self.jobs.lock().unwrap_or_else(|p| p.into_inner());
            let Some(jobs) = jobs.as_ref() else {
                return Err(Error::llm(&req.phase, "the embedded model was shut down"));
            };
            jobs.send(Job::Chat { req: req.clone(), max_tokens: self.max_tokens.or(req.max_tokens), first, reply: tx })
                .map_err(|_| Error::llm(&req.phase, "the embedded model's thread has stopped"))?;
        }
        let answer = rx
            .recv()
            .map_err(|_| Error::llm(&req.phase, "the embedded model's thread has stopped"))?
            .map_err(|e| Error::llm(&req.phase, format!("embedded model {}: {e}", self.path.display())))?;
        if answer.local.unconstrained > 0 && !self.warned_unconstrained.swap(true, std::sync::atomic::Ordering::Relaxed)
        {
            eprintln!(
                "lucy: warning: the grammar did not hold for {} of {} answer(s) to {} (the grammar engine gave up while decoding; \
                 the guard still checks the answer); counted as `unconstrained` in the trace's costs",
                answer.local.unconstrained,
                answer.choices.len(),
                req.phase
            );
        }
        Ok(answer)
    }

    fn request(&self, req: &ChatRequest) -> ChatRequest {
        let mut req = req.clone();
        if !self.constrain {
            req.grammar = None;
            req.response_schema = None;
        }
        req
    }
}

fn response(req: &ChatRequest, answer: engine::Answer, started: Instant, skipped: u32) -> ChatResponse {
    ChatResponse {
        choices: answer.choices,
        usage: answer.usage,
        latency_ms: started.elapsed().as_secs_f64() * 1000.0,
        structured: req.constraint().is_some(),
        requests: 1,
        truncated: answer.truncated,
        local: Some(answer.local),
        cuts: answer.cuts,
        skipped,
    }
}

impl ChatModel for EmbeddedModel {
    fn chat(&self, req: &ChatRequest) -> Result<ChatResponse> {
        let started = Instant::now();
        let req = self.request(req);
        let answer = self.answer(&req, 0)?;
        Ok(response(&req, answer, started, 0))
    }

    /// The first `decided.first` samples, then the rest only when they do
    /// not decide; the second part reuses the resident prompt (one token
    /// evaluated) and numbers its samples on, so their seeds are those of a
    /// single request.
    fn chat_until(&self, req: &ChatRequest, decided: &crate::llm::Decider<'_>) -> Result<ChatResponse> {
        let started = Instant::now();
        let req = self.request(req);
        let n = req.n.max(1);
        if decided.first == 0 || decided.first >= n {
            let answer = self.answer(&req, 0)?;
            return Ok(response(&req, answer, started, 0));
        }
        let head = ChatRequest { n: decided.first, ..req.clone() };
        let mut answer = self.answer(&head, 0)?;
        if (decided.decided)(&answer.choices) {
            let skipped = (n - decided.first) as u32;
            return Ok(response(&req, answer, started, skipped));
        }
        let tail = ChatRequest { n: n - decided.first, ..req.clone() };
        let rest = self.answer(&tail, decided.first)?;
        let base = answer.choices.len();
        answer.choices.extend(rest.choices);
        answer.usage.completion_tokens += rest.usage.completion_tokens;
        answer.truncated += rest.truncated;
        answer.cuts.extend(rest.cuts.into_iter().map(|mut c| {
            c.choice += base;
            c
        }));
        let (a, b) = (&mut answer.local, rest.local);
        a.prompt_evaluated += b.prompt_evaluated;
        a.prefill_ms += b.prefill_ms;
        a.decode_ms += b.decode_ms;
        a.unconstrained += b.unconstrained;
        a.looped += b.looped;
        Ok(response(&req, answer, started, 0))
    }

    fn model_name(&self) -> String {
        self.name.clone()
    }

    fn honours_grammar(&self) -> bool {
        self.constrain
    }
}

impl Drop for EmbeddedModel {
    fn drop(&mut self) {
        // Closing the queue ends the worker's loop; wait so llama.cpp frees
        // its buffers before the process moves on.
        self.jobs.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(w) = self.worker.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = w.join();
        }
    }
}
