//! The prompt-prefix cache's bookkeeping: which evaluated prompts are kept,
//! and which one a new prompt should extend.
//!
//! The KV buffer of the llama.cpp context holds one *resident* prompt (the
//! one evaluated last, in the working sequence) and the samples being
//! decoded. Every evaluated prompt is also kept as a host-memory snapshot of
//! its KV data (`llama_state_seq_get_data`), up to a byte budget; a new
//! prompt restores the snapshot (or keeps the resident prompt) with the
//! longest common token prefix, drops the KV past that prefix and evaluates
//! only its rest. Snapshots outside the KV buffer keep decoding fast:
//! llama.cpp attends over every occupied cell of a unified KV buffer, so
//! thirty cached prompts living there would make every generated token
//! attend over all of them.
//!
//! Bound: the snapshots' bytes never exceed the budget; the least recently
//! used are dropped first, and a prompt whose snapshot alone exceeds the
//! budget is not kept. A snapshot made redundant by a newer prompt that
//! shares most of it (the same schema with another question) is replaced
//! by the newer one.
//!
//! This module only decides; the engine moves the KV data. It is generic
//! over the snapshot type so it can be tested without a model.

/// One kept prompt.
#[derive(Debug, Clone)]
struct Entry<S> {
    tokens: Vec<i32>,
    snapshot: S,
    bytes: usize,
    last_used: u64,
}

/// Where a prompt's reused prefix comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Nothing is reused: clear the working sequence, evaluate everything.
    None,
    /// The prompt already in the working sequence.
    Resident,
    /// Snapshot number `i` (restore it into the working sequence first).
    Snapshot(usize),
}

/// What the engine should do for a prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    pub source: Source,
    /// Tokens at the start of the prompt taken from `source`; the engine
    /// drops the working sequence's KV from here on and evaluates the rest.
    pub reuse: usize,
}

/// Counters for the trace and the speed runner.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    pub snapshots: usize,
    pub bytes: usize,
    pub restores: u64,
    pub evictions: u64,
    /// The disk cache's counters, when it is on.
    pub disk: Option<super::disk::DiskStats>,
}

/// A byte-bounded set of prompt snapshots plus the resident prompt.
#[derive(Debug, Clone)]
pub struct PrefixCache<S> {
    entries: Vec<Entry<S>>,
    resident: Vec<i32>,
    budget: usize,
    bytes: usize,
    clock: u64,
    enabled: bool,
    restores: u64,
    evictions: u64,
}

impl<S> PrefixCache<S> {
    /// A cache keeping at most `budget` bytes of snapshots; `enabled =
    /// false` never reuses anything (for measuring the cache's effect).
    pub fn new(budget: usize, enabled: bool) -> Self {
        PrefixCache {
            entries: Vec::new(),
            resident: Vec::new(),
            budget,
            bytes: 0,
            clock: 0,
            enabled,
            restores: 0,
            evictions: 0,
        }
    }

    /// Choose where `prompt` starts from. At least one token is always left
    /// to evaluate (the last one's logits start the answer). Ties go to the
    /// resident prompt (nothing to restore).
    pub fn plan(&self, prompt: &[i32]) -> Plan {
        if !self.enabled {
            return Plan { source: Source::None, reuse: 0 };
        }
        let cap = prompt.len().saturating_sub(1);
        let mut best = Plan { source: Source::Resident, reuse: common_prefix(&self.resident, prompt).min(cap) };
        for (i, e) in self.entries.iter().enumerate() {
            let n = common_prefix(&e.tokens, prompt).min(cap);
            if n > best.reuse {
                best = Plan { source: Source::Snapshot(i), reuse: n };
            }
        }
        if best.reuse == 0 {
            Plan { source: Source::None, reuse: 0 }
        } else {
            best
        }
    }

    /// The snapshot a plan restores (marks it used).
    pub fn take(&mut self, i: usize) -> &S {
        self.clock += 1;
        self.restores += 1;
        self.entries[i].last_used = self.clock;
        &self.entries[i].snapshot
    }

    /// Record that the working sequence now holds `prompt`.
    pub fn set_resident(&mut self, prompt: &[i32]) {
        self.resident.clear();
        self.resident.extend_from_slice(prompt);
    }

    /// Record that the working sequence holds nothing usable.
    pub fn clear_resident(&mut self) {
        self.resident.clear();
    }

    /// Whether a snapshot of `len` tokens at `bytes_per_token` would be
    /// kept at all (the engine skips making it otherwise).
    pub fn would_keep(&self, bytes: usize) -> bool {
        self.enabled && bytes <= self.budget
    }

    /// Keep `snapshot` (of `bytes` bytes) of the evaluated `prompt`.
    /// Snapshots that `prompt` supersedes (it shares at least half of their
    /// tokens from the start) are dropped; then the least recently used go
    /// until the budget holds.
    pub fn keep(&mut self, prompt: &[i32], snapshot: S, bytes: usize) {
        if !self.would_keep(bytes) {
            return;
        }
        let mut i = 0;
        while i < self.entries.len() {
            let e = &self.entries[i];
            if 2 * common_prefix(&e.tokens, prompt) >= e.tokens.len() {
                self.bytes -= e.bytes;
                self.entries.swap_remove(i);
            } else {
                i += 1;
            }
        }
        while self.bytes + bytes > self.budget {
            let Some(lru) = (0..self.entries.len()).min_by_key(|&i| self.entries[i].last_used) else { break };
            self.bytes -= self.entries[lru].bytes;
            self.entries.swap_remove(lru);
            self.evictions += 1;
        }
        self.clock += 1;
        self.bytes += bytes;
        self.entries.push(Entry { tokens: prompt.to_vec(), snapshot, bytes, last_used: self.clock });
    }

    /// Drop every snapshot and the resident prompt.
    pub fn clear(&mut self) {
        self.entries.clear();
        self.resident.clear();
        self.bytes = 0;
    }

    /// The counters.
    pub fn stats(&self) -> CacheStats {
        CacheStats {
            snapshots: self.entries.len(),
            bytes: self.bytes,
            restores: self.restores,
            evictions: self.evictions,
            disk: None,
        }
    }
}

/// Length of the longest common prefix of two token lists (defined beside
/// the disk cache, which this module imports).
pub use super::disk::common_prefix;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resident_prompt_is_reused_and_one_token_is_left() {
        let mut c: PrefixCache<()> = PrefixCache::new(1000, true);
        assert_eq!(c.plan(&[1, 2, 3]), Plan { source: Source::None, reuse: 0 });
        c.set_resident(&[1, 2, 3, 4]);
        assert_eq!(c.plan(&[1, 2, 3, 4]), Plan { source: Source::Resident, reuse: 3 });
        assert_eq!(c.plan(&[1, 2, 9]), Plan { source: Source::Resident, reuse: 2 });
        assert_eq!(c.plan(&[7, 8]), Plan { source: Source::None, reuse: 0 });
    }

    #[test]
    fn longest_snapshot_wins_over_a_shorter_resident_prefix() {
        let mut c: PrefixCache<&str> = PrefixCache::new(1000, true);
        c.keep(&[1, 2, 3, 4, 5], "schema A", 100);
        c.keep(&[7, 8, 9], "schema B", 100);
        c.set_resident(&[7, 8, 9]);
        // A prompt over schema A with another question: restore A's snapshot.
        let p = c.plan(&[1, 2, 3, 4, 6]);
        assert_eq!(p, Plan { source: Source::Snapshot(0), reuse: 4 });
        assert_eq!(*c.take(0), "schema A");
        assert_eq!(c.stats().restores, 1);
        // Same length from the resident prompt: no restore needed.
        assert_eq!(c.plan(&[7, 8, 9, 10]), Plan { source: Source::Resident, reuse: 3 });
    }

    #[test]
    fn budget_evicts_least_recently_used_and_never_overflows() {
        let mut c: PrefixCache<u32> = PrefixCache::new(250, true);
        c.keep(&[1, 1, 1], 1, 100);
        c.keep(&[2, 2, 2], 2, 100);
        let _ = c.take(0); // [1,1,1] used after [2,2,2]
        c.keep(&[3, 3, 3], 3, 100);
        let s = c.stats();
        assert_eq!((s.snapshots, s.bytes, s.evictions), (2, 200, 1));
        assert_eq!(c.plan(&[2, 2, 2, 2]).reuse, 0, "[2,2,2] was the least recently used");
        assert!(c.plan(&[1, 1, 1, 1]).reuse == 3 && c.plan(&[3, 3, 3, 3]).reuse == 3);
        // Larger than the whole budget: not kept, nothing evicted.
        assert!(!c.would_keep(251));
        c.keep(&[4, 4, 4], 4, 251);
        assert_eq!(c.stats().snapshots, 2);
        assert!(c.stats().bytes <= 250);
    }

    #[test]
    fn a_newer_prompt_over_the_same_prefix_replaces_the_old_snapshot() {
        let mut c: PrefixCache<u32> = PrefixCache::new(10_000, true);
        // Schema (4 tokens) + question 1 (2 tokens).
        c.keep(&[1, 2, 3, 4, 50, 51], 1, 60);
        // The same schema with question 2: supersedes the first.
        c.keep(&[1, 2, 3, 4, 60, 61], 2, 60);
        assert_eq!(c.stats().snapshots, 1);
        assert_eq!(c.stats().bytes, 60);
        // Sharing only a short header (the chat template) does not replace.
        c.keep(&[1, 9, 9, 9, 9, 9], 3, 60);
        assert_eq!(c.stats().snapshots, 2);
    }

    #[test]
    fn disabled_never_reuses_or_keeps() {
        let mut c: PrefixCache<()> = PrefixCache::new(1000, false);
        c.set_resident(&[1, 2, 3]);
        c.keep(&[1, 2, 3], (), 10);
        assert_eq!(c.plan(&[1, 2, 3]), Plan { source: Source::None, reuse: 0 });
        assert_eq!(c.stats().snapshots, 0);
    }
}
