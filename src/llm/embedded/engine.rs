//! The llama.cpp side of the embedded backend: one model, one context, the
//! prompt-prefix cache (the resident prompt in the KV buffer, earlier ones as
//! host-memory snapshots; see `prefix.rs`), and sampling of `n`
//! answers that share one prompt evaluation (the evaluated sequence is
//! copied to one KV sequence per sample and the samples decode together, one
//! batch per step), optionally under an llguidance grammar.
//!
//! Everything here runs on the backend's one worker thread (a llama.cpp
//! context is not `Send`).

use std::num::NonZeroU32;
use std::path::Path;
use std::sync::OnceLock;
use std::time::Instant;

use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::{DecodeError, LlamaStateSeqFlags};
use llguidance::api::TopLevelGrammar;
use llguidance::{Matcher, ParserFactory};

use super::disk::DiskStore;
use super::prefix::{PrefixCache, Source};
use super::threads::{BatchThreads, CallSpeed};
use super::EmbeddedOptions;
use crate::llm::stop::Stopper;
use crate::llm::{ChatRequest, Constraint, Cut, LocalCost, Usage};
use std::sync::Arc;

/// The sequence id of the prompt being answered (the resident prompt);
/// samples decode in the ids after it.
pub(super) const WORK_SEQ: usize = 0;
/// Samples decoded together at most (more are done in rounds).
pub(super) const MAX_PARALLEL: usize = 8;
/// A disk snapshot is read only when it shares this many tokens more than
/// the best one in memory (reading ~28 KiB per token costs less than
/// evaluating a token, but not nothing).
const MIN_DISK_GAIN: usize = 16;

/// The process-wide llama.cpp backend (it may be initialised only once).
fn backend() -> std::result::Result<&'static LlamaBackend, String> {
    static BACKEND: OnceLock<std::result::Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            let mut b = LlamaBackend::init().map_err(|e| format!("cannot initialise llama.cpp: {e}"))?;
            if std::env::var_os("LUCY_LLM_LOG").is_none() {
                b.void_logs();
            }
            Ok(b)
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// A loaded model (kept by the worker for the process's life).
pub(super) struct Loaded {
    pub model: LlamaModel,
    pub template: LlamaChatTemplate,
}

/// Load the model and its chat template. Errors are plain text; the caller
/// adds the file name and the fix.
pub(super) fn load(path: &Path) -> std::result::Result<Loaded, String> {
    let backend = backend()?;
    let params = LlamaModelParams::default();
    let model = LlamaModel::load_from_file(backend, path, &params)
        .map_err(|_| "llama.cpp could not load it (unsupported architecture or a damaged/truncated file; set LUCY_LLM_LOG=1 to see llama.cpp's log)".to_string())?;
    let template = model
        .chat_template(None)
        .map_err(|_| "it has no chat template in its metadata (tokenizer.chat_template); lucy needs an instruction-tuned chat model".to_string())?;
    // Fail now, not at the first question, when llama.cpp cannot apply it.
    let probe = [LlamaChatMessage::new("user".into(), "ping".into()).map_err(|e| e.to_string())?];
    model.apply_chat_template(&template, &probe, true).map_err(|e| {
        format!("llama.cpp cannot apply its chat template ({e}); use a model whose template llama.cpp supports")
    })?;
    Ok(Loaded { model, template })
}

/// The MatchTables schema (an array of an enum of names) as a grammar in
/// the prompts' own list format: `[A, B]`, names bare or quoted, at least one
/// and at most as many as offered (so the answer always ends). A strict JSON
/// array would fight the prompt ("[element, element, ...]"): measured on
/// Qwen2.5-Coder-1.5B, every sample of DDO Q1 then came back `[]`, because
/// the bare name the model wanted after `[` was masked and `]` was next.
fn name_list_grammar(schema: &serde_json::Value) -> Option<String> {
    let o = schema.as_object()?;
    if o.get("type")?.as_str()? != "array" {
        return None;
    }
    let names: Vec<&str> = o.get("items")?.get("enum")?.as_array()?.iter().filter_map(|v| v.as_str()).collect();
    if names.is_empty() {
        return None;
    }
    let lit = |n: &str| serde_json::to_string(n).expect("a string serialises");
    let alts: Vec<String> = names.iter().map(|n| lit(n)).collect();
    Some(format!(
        "start: \"[\" item (SEP item) ~ 0..{} \"]\"\nSEP: /,[ \\n]?/\nitem: name | \"\\\"\" name \"\\\"\" | \"'\" name \"'\"\nname: {}\n",
        names.len() - 1,
        alts.join(" | ")
    ))
}

/// One answered request, before it becomes a `ChatResponse`.
pub(super) struct Answer {
    pub choices: Vec<String>,
    pub usage: Usage,
    pub local: LocalCost,
    pub truncated: u32,
    /// Samples stopped because they repeated themselves.
    pub cuts: Vec<Cut>,
}

/// The context and the state kept between calls.
pub(super) struct Engine<'m> {
    loaded: &'m Loaded,
    ctx: LlamaContext<'m>,
    /// Snapshots: the bytes llama.cpp's `llama_state_seq_get_data` wrote.
    cache: PrefixCache<Arc<Vec<u8>>>,
    /// The snapshots kept between processes (`disk.rs`), when on.
    disk: Option<DiskStore>,
    factory: Option<ParserFactory>,
    opts: EmbeddedOptions,
    n_ctx: usize,
    /// The thread counts per call (`threads.rs`).
    threads: BatchThreads,
    /// (`n_threads`, `n_threads_batch`) of `ctx`.
    ctx_threads: (usize, usize),
}

/// The context parameters for `opts` with these thread counts.
fn context_params(opts: &EmbeddedOptions, (single, batch): (usize, usize)) -> LlamaContextParams {
    let t = |n: usize| i32::try_from(n.max(1)).unwrap_or(1);
    LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(opts.n_ctx))
        .with_n_batch(opts.n_batch)
        .with_n_ubatch(opts.n_batch)
        .with_n_seq_max((1 + MAX_PARALLEL) as u32)
        .with_kv_unified(true)
        .with_n_threads(t(single))
        .with_n_threads_batch(t(batch))
        // llama.cpp's own timings (llama_perf_context), for llm_speed;
        // off by default in llama_context_default_params.
        .with_no_perf(false)
}

impl<'m> Engine<'m> {
    pub fn new(loaded: &'m Loaded, opts: &EmbeddedOptions) -> std::result::Result<Self, String> {
        let backend = backend()?;
        let mut threads = if opts.auto_threads {
            BatchThreads::auto(opts.threads, opts.thread_collapse_ratio)
        } else {
            BatchThreads::fixed(opts.threads)
        };
        let ctx_threads = threads.before_call(Instant::now());
        let ctx = loaded
            .model
            .new_context(backend, context_params(opts, ctx_threads))
            .map_err(|e| format!("cannot create a llama.cpp context of {} tokens: {e}", opts.n_ctx))?;
        let n_ctx = ctx.n_ctx() as usize;
        Ok(Engine {
            loaded,
            ctx,
            cache: PrefixCache::new(opts.prefix_cache_mb.saturating_mul(1 << 20), opts.prefix_cache),
            disk: match (&opts.disk_cache, &opts.model_sha256) {
                (Some(dir), Some(sha)) if opts.prefix_cache => {
                    Some(DiskStore::open(dir, super::disk::StoreKey::new(sha), opts.disk_cache_mb))
                }
                _ => None,
            },
            factory: None,
            opts: opts.clone(),
            n_ctx,
            threads,
            ctx_threads,
        })
    }

    /// A new context with other thread counts (llama-cpp-2 does not expose
    /// `llama_set_n_threads`). The prefix cache's snapshots stay usable;
    /// only the resident prompt is lost.
    fn set_threads(&mut self, want: (usize, usize)) -> std::result::Result<(), String> {
        let loaded: &'m Loaded = self.loaded;
        let ctx = loaded
            .model
            .new_context(backend()?, context_params(&self.opts, want))
            .map_err(|e| format!("cannot create a llama.cpp context of {} tokens: {e}", self.opts.n_ctx))?;
        self.ctx = ctx;
        self.cache.clear_resident();
        self.ctx_threads = want;
        Ok(())
    }

    fn factory(&mut self) -> std::result::Result<&ParserFactory, String> {
        if self.factory.is_none() {
            let env = LlamaSampler::llguidance_tok_env(&self.loaded.model);
            let mut f =
                ParserFactory::new_simple(&env).map_err(|e| format!("cannot set up constrained decoding: {e}"))?;
            f.set_stderr_log_level(0);
            // See GRAMMAR_MAX_ITEMS for why not llguidance's default.
            f.limits_mut().step_max_items = self.opts.grammar_max_items;
            self.factory = Some(f);
        }
        Ok(self.factory.as_ref().expect("set above"))
    }

    /// A fresh matcher for `constraint`; every sample gets its own.
    fn matcher(&mut self, constraint: &Constraint) -> std::result::Result<Matcher, String> {
        let grammar = match constraint {
            Constraint::JsonSchema(s) => match name_list_grammar(s) {
                Some(g) => TopLevelGrammar::from_lark(g),
                None => {
                    // Compact JSON: flexible whitespace would let a weak
                    // model pad an answer with blanks until the token limit.
                    let mut s = s.clone();
                    if let Some(o) = s.as_object_mut() {
                        o.entry("x-guidance").or_insert_with(
                            || serde_json::json!({"whitespace_flexible": false, "item_separator": ", "}),
                        );
                    }
                    TopLevelGrammar::from_json_schema(s)
                }
            },
            Constraint::Lark(g) => TopLevelGrammar::from_lark(g.clone()),
        };
        let parser = self.factory()?.create_parser(grammar).map_err(|e| format!("the grammar is invalid: {e}"))?;
        Ok(Matcher::new(Ok(parser)))
    }

    /// The most tokens a list of names can take (the MatchTables schema,
    /// read as [`name_list_grammar`]): as many items as the grammar allows
    /// (one per offered name), each as long as the longest name quoted and
    /// followed by a separator, with a token of slack per item, plus the
    /// brackets; unbounded for any other constraint. The grammar already
    /// ends such a list; this bounds a sample whose grammar stopped holding
    /// (`unconstrained`).
    fn list_budget(&self, constraint: Option<&Constraint>) -> usize {
        let Some(Constraint::JsonSchema(s)) = constraint else { return usize::MAX };
        if name_list_grammar(s).is_none() {
            return usize::MAX;
        }
        let names: Vec<&str> = s["items"]["enum"].as_array().into_iter().flatten().filter_map(|v| v.as_str()).collect();
        let vocab = self.loaded.model.vocab();
        let longest = names.iter().map(|n| vocab.tokenize(format!("\"{n}\", ").as_bytes(), false, false).len()).max();
        names.len() * longest.unwrap_or(0) + 2 + names.len()
    }

    /// The prompt's tokens under the model's chat template.
    pub fn tokenize_chat(&self, req: &ChatRequest) -> std::result::Result<Vec<LlamaToken>, String> {
        let msgs = req
            .messages
            .iter()
            .map(|m| LlamaChatMessage::new(m.role.clone(), m.content.clone()))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| format!("a message contains a NUL byte: {e}"))?;
        let text = self
            .loaded
            .model
            .apply_chat_template(&self.loaded.template, &msgs, true)
            .map_err(|e| format!("cannot apply the chat template: {e}"))?;
        Ok(self.loaded.model.vocab().tokenize(text.as_bytes(), true, true))
    }

    /// Answer `req`: `n` samples at `temperature`, at most `max_tokens` each.
    /// Samples are numbered from `first` (their seeds follow the number), so
    /// a request answered in two parts gives the answers of one.
    pub fn chat(
        &mut self,
        req: &ChatRequest,
        max_tokens: Option<u32>,
        first: usize,
    ) -> std::result::Result<Answer, String> {
        let prompt = self.tokenize_fitting(req)?;
        let n = req.n.max(1);
        // Leave room for every sample's answer in the shared KV buffer.
        let room = (self.n_ctx - prompt.len()) / n.min(MAX_PARALLEL) - 1;
        let constraint = req.constraint();
        let asked = max_tokens.map_or(self.opts.max_tokens as usize, |m| m as usize);
        let limit = asked.min(self.list_budget(constraint.as_ref())).min(room).max(1);
        let matchers = match &constraint {
            Some(c) => {
                let first = self.matcher(c)?;
                if let Some(e) = first.get_error() {
                    return Err(format!("the grammar is invalid: {e}"));
                }
                Some(first)
            }
            None => None,
        };

        let (slot, reused, disk_reused, prefill_ms) = self.evaluate(&prompt)?;
        let last_idx = ((prompt.len() - reused) - 1) % self.opts.n_batch as usize;

        let t1 = Instant::now();
        let mut choices = Vec::with_capacity(n);
        let mut truncated = 0u32;
        let mut generated = 0u64;
        let mut unconstrained = 0u32;
        let mut looped = 0u32;
        let mut cuts: Vec<Cut> = Vec::new();
        for round in 0..n.div_ceil(MAX_PARALLEL) {
            let k = (n - round * MAX_PARALLEL).min(MAX_PARALLEL);
            let mut samplers = Vec::with_capacity(k);
            for i in 0..k {
                let idx = first + round * MAX_PARALLEL + i;
                let m = matchers.as_ref().map(|m| m.deep_clone());
                samplers.push(self.sampler(req.temperature, idx as u64, m));
            }
            let out = self.decode_samples(slot, prompt.len(), last_idx, samplers, limit)?;
            for (text, ids, cut, lp) in out {
                generated += ids.len() as u64;
                truncated += u32::from(cut);
                if let Some(mut c) = lp {
                    looped += 1;
                    c.choice = choices.len();
                    cuts.push(c);
                }
                // llama-cpp-2's grammar sampler lets every token through once
                // the matcher fails: check the tokens against a fresh one.
                if let Some(m) = &matchers {
                    let mut check = m.deep_clone();
                    if check.consume_tokens(&ids).is_err() || check.is_error() {
                        unconstrained += 1;
                    }
                }
                choices.push(text);
            }
        }
        let decode_ms = t1.elapsed().as_secs_f64() * 1000.0;
        let batched = n > 1;
        self.threads.after_call(
            Instant::now(),
            CallSpeed {
                evaluated: prompt.len() - reused,
                prefill_ms,
                batched_tokens: if batched { generated } else { 0 },
                batched_ms: if batched { decode_ms } else { 0.0 },
            },
        );
        Ok(Answer {
            choices,
            usage: Usage { prompt_tokens: prompt.len() as u64, completion_tokens: generated },
            local: LocalCost {
                prompt_evaluated: (prompt.len() - reused) as u64,
                prompt_reused: reused as u64,
                prefill_ms,
                decode_ms,
                threads: self.ctx_threads.1 as u32,
                unconstrained,
                looped,
                disk_reused: disk_reused as u64,
            },
            truncated,
            cuts,
        })
    }

    /// The prompt's tokens, or the error that it does not fit the context.
    fn tokenize_fitting(&self, req: &ChatRequest) -> std::result::Result<Vec<LlamaToken>, String> {
        let prompt = self.tokenize_chat(req)?;
        if prompt.len() + 1 >= self.n_ctx {
            return Err(format!(
                "the prompt has {} tokens, {} {} (raise --llm-ctx)",
                prompt.len(),
                crate::llm::CONTEXT_OVERFLOW,
                self.n_ctx
            ));
        }
        Ok(prompt)
    }

    /// [`Self::eval_prompt`] on this call's threads, timed: (slot, reused,
    /// reused from disk, prefill ms).
    fn evaluate(&mut self, prompt: &[LlamaToken]) -> std::result::Result<(usize, usize, usize, f64), String> {
        let want = self.threads.before_call(Instant::now());
        if want != self.ctx_threads {
            self.set_threads(want)?;
        }
        let t0 = Instant::now();
        let (slot, reused, disk_reused) = self.eval_prompt(prompt)?;
        // Count the prompt's compute as prefill on backends that compute
        // asynchronously (on the CPU the decode calls already block).
        self.ctx.synchronize();
        Ok((slot, reused, disk_reused, t0.elapsed().as_secs_f64() * 1000.0))
    }

    /// Evaluate `prompt` into the working sequence, reusing the longest
    /// prefix it shares with the resident prompt or a snapshot, then keep a
    /// snapshot of it. Returns the working sequence and the tokens reused.
    /// The last token's logits are at `(evaluated - 1) % n_batch` of the
    /// last batch.
    fn eval_prompt(&mut self, prompt: &[LlamaToken]) -> std::result::Result<(usize, usize, usize), String> {
        let ids: Vec<i32> = prompt.iter().map(|t| t.0).collect();
        let mut plan = self.cache.plan(&ids);
        // A snapshot on disk that shares more than memory: read it into the
        // memory cache first (then it is planned like any other).
        let mut from_disk = false;
        if let Some(disk) = self.disk.as_mut() {
            if let Some((i, n)) = disk.best(&ids) {
                if n.min(ids.len().saturating_sub(1)) > plan.reuse + MIN_DISK_GAIN {
                    let tokens = disk.tokens(i).to_vec();
                    if let Some(payload) = disk.load(i) {
                        let bytes = payload.len();
                        if self.cache.would_keep(bytes) {
                            self.cache.keep(&tokens, Arc::new(payload), bytes);
                            plan = self.cache.plan(&ids);
                            from_disk = true;
                        }
                    }
                }
            }
        }
        let seq = WORK_SEQ as u32;
        let mut reuse = plan.reuse;
        match plan.source {
            Source::None => {
                let _ = self.ctx.clear_kv_cache_seq(Some(seq), None, None);
            }
            Source::Resident => {}
            Source::Snapshot(i) => {
                let _ = self.ctx.clear_kv_cache_seq(Some(seq), None, None);
                let snap = Arc::clone(self.cache.take(i));
                // SAFETY: `snap` holds bytes `llama_state_seq_get_data` wrote
                // for this model under this llama.cpp build: taken in this
                // process, or read from a disk file whose key (model hash,
                // llama.cpp build) and SHA-256 matched (`disk.rs`).
                // llama.cpp checks the layout again while reading.
                let ok = unsafe { self.ctx.state_seq_set_data_ext(&snap, seq as i32, LlamaStateSeqFlags::empty()) };
                if !ok {
                    let _ = self.ctx.clear_kv_cache_seq(Some(seq), None, None);
                    reuse = 0;
                }
            }
        }
        self.cache.clear_resident();
        if reuse > 0 && !self.ctx.clear_kv_cache_seq(Some(seq), Some(reuse as u32), None).unwrap_or(false) {
            let _ = self.ctx.clear_kv_cache_seq(Some(seq), None, None);
            reuse = 0;
        }
        if let Err(e) = self.decode_range(prompt, reuse, seq as i32) {
            let _ = self.ctx.clear_kv_cache_seq(Some(seq), None, None);
            return Err(format!("llama.cpp could not evaluate the prompt ({e})"));
        }
        self.cache.set_resident(&ids);
        let size = self.ctx.state_seq_get_size_ext(seq as i32, LlamaStateSeqFlags::empty());
        let to_disk = self.disk.as_ref().is_some_and(|d| d.wants(&ids));
        if self.cache.would_keep(size) || to_disk {
            let mut buf = vec![0u8; size];
            // SAFETY: `buf` has the size llama.cpp just reported for this
            // sequence; it writes exactly that many bytes.
            let n =
                unsafe { self.ctx.state_seq_get_data_ext(buf.as_mut_ptr(), seq as i32, LlamaStateSeqFlags::empty()) };
            // A failed snapshot only costs a later re-evaluation.
            if n == size {
                if to_disk {
                    if let Some(d) = self.disk.as_mut() {
                        d.save(&ids, &buf);
                    }
                }
                self.cache.keep(&ids, Arc::new(buf), size);
            }
        }
        Ok((WORK_SEQ, reuse, if from_disk { reuse } else { 0 }))
    }

    /// The prefix cache's counters (snapshots kept, bytes, restores,
    /// evictions; the disk cache's files, restores and writes).
    pub fn cache_stats(&self) -> super::prefix::CacheStats {
        let mut s = self.cache.stats();
        if let Some(d) = &self.disk {
            s.disk = Some(d.stats());
        }
        s
    }

    /// Evaluate `req`'s prompt into the caches without answering it.
    pub fn prefill(&mut self, req: &ChatRequest) -> std::result::Result<LocalCost, String> {
        let prompt = self.tokenize_fitting(req)?;
        let (_, reused, disk_reused, prefill_ms) = self.evaluate(&prompt)?;
        Ok(LocalCost {
            prompt_evaluated: (prompt.len() - reused) as u64,
            prompt_reused: reused as u64,
            prefill_ms,
            threads: self.ctx_threads.1 as u32,
            disk_reused: disk_reused as u64,
            ..LocalCost::default()
        })
    }

    fn decode_range(&mut self, prompt: &[LlamaToken], from: usize, seq: i32) -> std::result::Result<(), DecodeError> {
        let nb = self.opts.n_batch as usize;
        let mut batch = LlamaBatch::new(nb, 1);
        let mut start = from;
        while start < prompt.len() {
            let end = (start + nb).min(prompt.len());
            batch.clear();
            for (pos, tok) in prompt.iter().enumerate().take(end).skip(start) {
                batch.add(*tok, pos as i32, &[seq], pos + 1 == prompt.len()).map_err(|_| DecodeError::NTokensZero)?;
            }
            if let Err(e) = self.ctx.decode(&mut batch) {
                // Drop the part of this prompt that did get in.
                let _ = self.ctx.clear_kv_cache_seq(Some(seq as u32), Some(from as u32), None);
                return Err(e);
            }
            start = end;
        }
        Ok(())
    }

    /// The sampler chain of sample `index`: grammar first (it masks the
    /// logits), then the usual llama.cpp server chain, seeded per sample so a
    /// request's answers are reproducible whatever came before it.
    fn sampler(&self, temperature: f64, index: u64, matcher: Option<Matcher>) -> LlamaSampler {
        let mut chain = Vec::new();
        if let Some(m) = matcher {
            chain.push(LlamaSampler::from(m));
        }
        if temperature <= 0.0 {
            chain.push(LlamaSampler::greedy());
        } else {
            let seed = self
                .opts
                .seed
                .wrapping_mul(0x9E37_79B9_7F4A_7C15)
                .wrapping_add(index.wrapping_mul(0xBF58_476D_1CE4_E5B9));
            chain.extend([
                LlamaSampler::top_k(40),
                LlamaSampler::top_p(0.95, 1),
                LlamaSampler::min_p(0.05, 1),
                LlamaSampler::temp(temperature as f32),
                LlamaSampler::dist((seed ^ (seed >> 32)) as u32),
            ]);
        }
        LlamaSampler::chain_simple(chain)
    }

    /// Decode `samplers.len()` answers from the prompt in `slot` (length
    /// `n_prompt`, last logits at batch index `last_idx`), each in its own
    /// sequence, one batch per step. Returns (text, token ids, cut off).
    fn decode_samples(
        &mut self,
        slot: usize,
        n_prompt: usize,
        last_idx: usize,
        mut samplers: Vec<LlamaSampler>,
        limit: usize,
    ) -> std::result::Result<Vec<Sampled>, String> {
        let k = samplers.len();
        let seqs: Vec<i32> = (0..k).map(|i| (WORK_SEQ + 1 + i) as i32).collect();
        for &s in &seqs {
            let _ = self.ctx.clear_kv_cache_seq(Some(s as u32), None, None);
            self.ctx
                .copy_kv_cache_seq(slot as i32, s, None, None)
                .map_err(|e| format!("cannot copy the prompt's KV cache: {e}"))?;
        }
        let vocab = self.loaded.model.vocab();
        let mut pieces: Vec<Vec<u8>> = vec![Vec::new(); k];
        let mut ids: Vec<Vec<u32>> = vec![Vec::new(); k];
        let mut done = vec![false; k];
        let mut cut = vec![false; k];
        let mut stoppers: Vec<Stopper> = vec![Stopper::new(); k];
        let mut loops: Vec<Option<Cut>> = vec![None; k];
        // Batch index of each live sample's logits; all start from the prompt's.
        let mut logit_idx: Vec<i32> = vec![last_idx as i32; k];
        let mut batch = LlamaBatch::new(k.max(1), 1);
        let mut step = 0usize;
        let result = loop {
            batch.clear();
            let mut next_idx = vec![-1i32; k];
            for i in 0..k {
                if done[i] {
                    continue;
                }
                let tok = samplers[i].sample(&self.ctx, logit_idx[i]);
                if vocab.is_eog(tok) {
                    done[i] = true;
                    continue;
                }
                let piece = vocab.token_to_piece(tok, false, None);
                loops[i] = stoppers[i].push(tok.0.cast_unsigned(), &piece);
                pieces[i].extend(piece);
                ids[i].push(tok.0.cast_unsigned());
                if ids[i].len() >= limit || loops[i].is_some() {
                    done[i] = true;
                    cut[i] = true;
                    continue;
                }
                next_idx[i] = batch.n_tokens();
                // Cannot fail: the batch has room for one token per sample.
                let _ = batch.add(tok, (n_prompt + step) as i32, &[seqs[i]], true);
            }
            if batch.n_tokens() == 0 {
                break Ok(());
            }
            if let Err(e) = self.ctx.decode(&mut batch) {
                break Err(format!(
                    "llama.cpp failed while generating ({e}); lower --llm-max-tokens or raise --llm-ctx"
                ));
            }
            logit_idx = next_idx;
            step += 1;
        };
        for &s in &seqs {
            let _ = self.ctx.clear_kv_cache_seq(Some(s as u32), None, None);
        }
        result?;
        Ok(pieces
            .into_iter()
            .zip(ids)
            .zip(cut)
            .zip(loops)
            .map(|(((p, c), t), l)| {
                // `keep` is a byte offset of the raw pieces; the text is read
                // lossily, so keep it only where it is a char boundary.
                let text = String::from_utf8_lossy(&p).into_owned();
                let l = l.map(|mut l| {
                    l.keep = l.keep.min(text.len());
                    while !text.is_char_boundary(l.keep) {
                        l.keep -= 1;
                    }
                    l
                });
                (text, c, t, l)
            })
            .collect())
    }
}

/// One decoded sample: its text, token ids, whether it was cut off (at the
/// limit or as a loop), and the loop when it was one.
type Sampled = (String, Vec<u32>, bool, Option<Cut>);

/// One raw speed measurement: a prompt evaluated from scratch, then `n`
/// samples decoded together exactly as [`Engine::chat`] decodes them (one
/// batch per step, optionally under a grammar); wall times as lucy sees them
/// beside llama.cpp's own performance counters for the same work. The
/// difference between the two decode times is lucy's loop: sampling,
/// grammar masks, detokenizing.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SpeedSample {
    pub prompt_tokens: u64,
    pub prefill_ms: f64,
    /// Samples decoded together.
    pub samples: u64,
    /// Tokens generated, summed over the samples.
    pub decode_tokens: u64,
    /// Decode steps (batches); each decodes one token of every live sample.
    pub decode_steps: u64,
    pub decode_ms: f64,
    /// llama.cpp's `t_p_eval_ms` for the prompt, and its compute time
    /// (`t_p_eval_ms + t_eval_ms`) for the decode steps (`llama_perf_context`).
    pub llama_prefill_ms: f64,
    pub llama_decode_ms: f64,
}

impl Engine<'_> {
    /// Measure prefill of `text` (a prompt already in the chat template; no
    /// prefix reuse, the cache is emptied) and the decoding of `n` samples
    /// of at most `gen` tokens each (greedy for one sample, temperature 0.2
    /// for more, as MatchTables samples), under `constraint` if given.
    pub fn measure(
        &mut self,
        text: &str,
        gen: usize,
        n: usize,
        constraint: Option<&Constraint>,
    ) -> std::result::Result<SpeedSample, String> {
        let prompt = self.loaded.model.vocab().tokenize(text.as_bytes(), true, true);
        let n = n.clamp(1, MAX_PARALLEL);
        if prompt.is_empty() || prompt.len() + n * (gen + 1) >= self.n_ctx {
            return Err(format!(
                "the measurement prompt has {} tokens; the context holds {}",
                prompt.len(),
                self.n_ctx
            ));
        }
        for s in 0..=(WORK_SEQ + MAX_PARALLEL) {
            let _ = self.ctx.clear_kv_cache_seq(Some(s as u32), None, None);
        }
        self.cache.clear();
        self.ctx.reset_timings();
        let t0 = Instant::now();
        self.decode_range(&prompt, 0, WORK_SEQ as i32).map_err(|e| format!("prefill failed: {e}"))?;
        // llama.cpp computes asynchronously and books the time at the next
        // synchronisation (normally the first sampling): wait here so the
        // prefill is timed and counted as prefill, not as decode.
        self.ctx.synchronize();
        let prefill_ms = t0.elapsed().as_secs_f64() * 1000.0;
        let llama_prefill_ms = self.ctx.timings().t_p_eval_ms();
        let last_idx = (prompt.len() - 1) % self.opts.n_batch as usize;
        let matcher = match constraint {
            Some(c) => Some(self.matcher(c)?),
            None => None,
        };
        let temperature = if n == 1 { 0.0 } else { 0.2 };
        let samplers: Vec<LlamaSampler> =
            (0..n).map(|i| self.sampler(temperature, i as u64, matcher.as_ref().map(Matcher::deep_clone))).collect();
        self.ctx.reset_timings();
        let t1 = Instant::now();
        let out = self.decode_samples(WORK_SEQ, prompt.len(), last_idx, samplers, gen);
        let decode_ms = t1.elapsed().as_secs_f64() * 1000.0;
        let t = self.ctx.timings();
        let _ = self.ctx.clear_kv_cache_seq(Some(WORK_SEQ as u32), None, None);
        let out = out?;
        let decode_tokens: u64 = out.iter().map(|(_, ids, _, _)| ids.len() as u64).sum();
        let decode_steps = out.iter().map(|(_, ids, _, _)| ids.len() as u64).max().unwrap_or(0);
        Ok(SpeedSample {
            prompt_tokens: prompt.len() as u64,
            prefill_ms,
            samples: n as u64,
            decode_tokens,
            decode_steps,
            decode_ms,
            llama_prefill_ms,
            llama_decode_ms: t.t_p_eval_ms() + t.t_eval_ms(),
        })
    }
}
