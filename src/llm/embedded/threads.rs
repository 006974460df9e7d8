//! How many threads llama.cpp gets, call by call.
//!
//! ggml's workers meet at a spinning barrier after every operation (hundreds
//! per token). Measured on this 2-core machine (benchmarks/results/embedded.md,
//! *Speed*; docs/llm.md, *Threads*):
//! - a **batch** (a prompt evaluation, or one step that decodes five samples
//!   at once) has enough work per operation: 2 threads evaluate prompts at
//!   90–95 tokens/s against 47–49 for one and decode five samples at 44–47
//!   against 24, when the second core is free; with another busy process
//!   prompt evaluation loses only ~20 % (38 against 47), but five-sample steps
//!   collapse (1.6 tokens/s);
//! - a **single-sample step** (one token: QueryView's and the direct
//!   baseline's SQL) gains little from a second thread (25 against 19–20
//!   tokens/s idle) and collapses 8–40× when the other core is busy.
//!
//! So the default ([`BatchThreads::auto`]) decodes single samples on one
//! thread and gives batches every core, and watches the batches: when a
//! batched step runs far slower than the same call's prompt evaluation
//! predicts, or two threads evaluate a prompt no faster than one did, it
//! drops batches to one thread and tries every core again after a back-off
//! (1 minute, doubling to 15 while the machine stays busy). `--llm-threads N`
//! fixes N threads for everything instead.

use std::time::{Duration, Instant};

/// A batched step's time per token above this multiple of the same call's
/// prompt evaluation time per token means the workers are waiting for a
/// descheduled peer. Measured ratios: 2.0 healthy (1 or 2 threads, idle or
/// not, five samples), 24 collapsed (2 threads, the other core busy).
pub const COLLAPSE_RATIO: f64 = 6.0;
/// Prompt evaluations shorter than this give no usable rate.
pub(super) const MIN_PREFILL_TOKENS: usize = 64;
/// Batched decoding shorter than this gives no usable rate.
pub(super) const MIN_BATCHED_TOKENS: u64 = 10;
/// Two threads must evaluate prompts at least this much faster than one
/// did to be worth keeping.
pub(super) const MIN_PREFILL_GAIN: f64 = 1.1;
/// The first back-off after a collapse; it doubles while collapses repeat.
pub(super) const FIRST_BACKOFF: Duration = Duration::from_secs(60);
/// The longest back-off.
pub(super) const MAX_BACKOFF: Duration = Duration::from_secs(15 * 60);

/// What one call measured, for [`BatchThreads::after_call`].
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct CallSpeed {
    /// Prompt tokens evaluated (not reused from the cache).
    pub evaluated: usize,
    /// Their wall time.
    pub prefill_ms: f64,
    /// Tokens decoded in steps of two or more samples.
    pub batched_tokens: u64,
    /// Those steps' wall time.
    pub batched_ms: f64,
}

/// The thread counts for llama.cpp's two settings: `n_threads` (steps of
/// one token) and `n_threads_batch` (everything larger).
#[derive(Debug, Clone)]
pub(super) struct BatchThreads {
    /// Threads for batches when the machine allows.
    max: usize,
    /// Threads for single-token steps.
    single: usize,
    adaptive: bool,
    /// See [`COLLAPSE_RATIO`].
    collapse_ratio: f64,
    /// Threads for batches now.
    current: usize,
    /// While at one thread after a collapse: when to try `max` again.
    retry_at: Option<Instant>,
    backoff: Duration,
    /// Prompt evaluation time per token at one thread, last measured.
    prefill_one: Option<f64>,
    /// Times batches dropped to one thread.
    pub backoffs: u32,
}

impl BatchThreads {
    /// `--llm-threads N`: N threads for everything, never changed.
    pub fn fixed(n: usize) -> Self {
        let n = n.max(1);
        BatchThreads {
            max: n,
            single: n,
            adaptive: false,
            collapse_ratio: COLLAPSE_RATIO,
            current: n,
            retry_at: None,
            backoff: FIRST_BACKOFF,
            prefill_one: None,
            backoffs: 0,
        }
    }

    /// The default: one thread for single-token steps, up to `max` for
    /// batches, backing off to one when a batched step takes more than
    /// `collapse_ratio` times the call's prompt evaluation time per token.
    pub fn auto(max: usize, collapse_ratio: f64) -> Self {
        let max = max.max(1);
        BatchThreads {
            max,
            single: 1,
            adaptive: max > 1,
            collapse_ratio,
            current: max,
            retry_at: None,
            backoff: FIRST_BACKOFF,
            prefill_one: None,
            backoffs: 0,
        }
    }

    /// (`n_threads`, `n_threads_batch`) for the next call, at `now`: after a
    /// back-off has run out, batches get every thread again.
    pub fn before_call(&mut self, now: Instant) -> (usize, usize) {
        if let Some(at) = self.retry_at {
            if now >= at {
                self.retry_at = None;
                self.current = self.max;
            }
        }
        (self.single, self.current)
    }

    /// Learn from a finished call at `now`; true when batches dropped to
    /// one thread.
    pub fn after_call(&mut self, now: Instant, s: CallSpeed) -> bool {
        let prefill =
            (s.evaluated >= MIN_PREFILL_TOKENS && s.prefill_ms > 0.0).then(|| s.prefill_ms / s.evaluated as f64);
        if self.current == 1 {
            if prefill.is_some() {
                self.prefill_one = prefill;
            }
            return false;
        }
        if !self.adaptive {
            return false;
        }
        let batched = (s.batched_tokens >= MIN_BATCHED_TOKENS).then(|| s.batched_ms / s.batched_tokens as f64);
        let collapsed = match (prefill, batched) {
            (Some(p), Some(b)) => b > self.collapse_ratio * p,
            _ => false,
        };
        let no_gain = match (prefill, self.prefill_one) {
            (Some(p), Some(one)) => p * MIN_PREFILL_GAIN > one,
            _ => false,
        };
        if collapsed || no_gain {
            self.current = 1;
            self.retry_at = Some(now + self.backoff);
            self.backoff = (self.backoff * 2).min(MAX_BACKOFF);
            self.backoffs += 1;
            true
        } else {
            if prefill.is_some() || batched.is_some() {
                self.backoff = FIRST_BACKOFF;
            }
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rates measured on this machine (benchmarks/results/embedded.md).
    fn idle_two() -> CallSpeed {
        // 900 tokens at 95 tok/s; 35 tokens in 7 five-sample steps at 47 tok/s.
        CallSpeed {
            evaluated: 900,
            prefill_ms: 900.0 / 95.0 * 1000.0,
            batched_tokens: 35,
            batched_ms: 35.0 / 47.0 * 1000.0,
        }
    }
    fn busy_two() -> CallSpeed {
        // Prompt at 38 tok/s, five-sample steps at 1.6 tok/s.
        CallSpeed {
            evaluated: 900,
            prefill_ms: 900.0 / 38.0 * 1000.0,
            batched_tokens: 35,
            batched_ms: 35.0 / 1.6 * 1000.0,
        }
    }
    fn one() -> CallSpeed {
        CallSpeed {
            evaluated: 900,
            prefill_ms: 900.0 / 47.0 * 1000.0,
            batched_tokens: 35,
            batched_ms: 35.0 / 24.0 * 1000.0,
        }
    }

    #[test]
    fn idle_machine_keeps_every_thread_for_batches_and_one_for_single_steps() {
        let mut t = BatchThreads::auto(2, COLLAPSE_RATIO);
        let now = Instant::now();
        for i in 0..20 {
            assert_eq!(t.before_call(now + Duration::from_secs(i)), (1, 2));
            assert!(!t.after_call(now + Duration::from_secs(i), idle_two()));
        }
        assert_eq!(t.backoffs, 0);
    }

    #[test]
    fn a_collapse_drops_batches_to_one_thread_then_retries_with_growing_back_off() {
        let mut t = BatchThreads::auto(2, COLLAPSE_RATIO);
        let t0 = Instant::now();
        assert_eq!(t.before_call(t0), (1, 2));
        assert!(t.after_call(t0, busy_two()), "1.6 tok/s batched against 38 tok/s prefill is a collapse");
        // One thread until the back-off runs out.
        assert_eq!(t.before_call(t0 + FIRST_BACKOFF - Duration::from_secs(1)), (1, 1));
        assert!(!t.after_call(t0, one()));
        let t1 = t0 + FIRST_BACKOFF;
        assert_eq!(t.before_call(t1), (1, 2), "tries every core again");
        assert!(t.after_call(t1, busy_two()));
        // Still busy: the back-off doubled.
        assert_eq!(t.before_call(t1 + FIRST_BACKOFF), (1, 1));
        assert_eq!(t.before_call(t1 + FIRST_BACKOFF * 2), (1, 2));
        // Idle again: kept, and the back-off starts over.
        assert!(!t.after_call(t1 + FIRST_BACKOFF * 2, idle_two()));
        assert_eq!(t.backoff, FIRST_BACKOFF);
        assert_eq!(t.backoffs, 2);
    }

    #[test]
    fn the_back_off_is_bounded() {
        let mut t = BatchThreads::auto(2, COLLAPSE_RATIO);
        let mut now = Instant::now();
        for _ in 0..20 {
            t.before_call(now);
            t.after_call(now, busy_two());
            now += MAX_BACKOFF;
        }
        assert_eq!(t.backoff, MAX_BACKOFF);
    }

    #[test]
    fn two_threads_no_faster_than_one_at_prompts_back_off_too() {
        let mut t = BatchThreads::auto(2, COLLAPSE_RATIO);
        let t0 = Instant::now();
        t.before_call(t0);
        t.after_call(t0, busy_two());
        t.before_call(t0);
        t.after_call(t0, one()); // learns 47 tok/s at one thread
        let t1 = t0 + FIRST_BACKOFF;
        assert_eq!(t.before_call(t1), (1, 2));
        // Single-sample call (nothing batched), prompt at 40 tok/s on two threads.
        let slow = CallSpeed { evaluated: 500, prefill_ms: 500.0 / 40.0 * 1000.0, ..CallSpeed::default() };
        assert!(t.after_call(t1, slow));
        assert_eq!(t.before_call(t1), (1, 1));
    }

    #[test]
    fn short_calls_teach_nothing() {
        let mut t = BatchThreads::auto(2, COLLAPSE_RATIO);
        let now = Instant::now();
        t.before_call(now);
        let tiny = CallSpeed { evaluated: 12, prefill_ms: 5_000.0, batched_tokens: 5, batched_ms: 9_000.0 };
        assert!(!t.after_call(now, tiny));
        assert_eq!(t.before_call(now), (1, 2));
    }

    #[test]
    fn fixed_counts_never_change() {
        let mut t = BatchThreads::fixed(2);
        let now = Instant::now();
        assert_eq!(t.before_call(now), (2, 2));
        assert!(!t.after_call(now, busy_two()));
        assert_eq!(t.before_call(now + MAX_BACKOFF), (2, 2));
        let mut one_thread = BatchThreads::auto(1, COLLAPSE_RATIO);
        assert_eq!(one_thread.before_call(now), (1, 1));
        assert!(!one_thread.adaptive);
    }
}
