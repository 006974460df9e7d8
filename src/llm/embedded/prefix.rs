//! The prompt-prefix cache's bookkeeping: which KV-cache sequence holds
//! which evaluated prompt, and which one a new prompt should extend.
//!
//! The cache lives in the llama.cpp context's fixed-size KV buffer (so its
//! memory is bounded by the context size): each slot is one sequence id
//! holding the tokens of a prompt evaluated earlier. A new prompt reuses the
//! slot with the longest common token prefix and evaluates only the rest;
//! with no useful prefix it takes the least recently used slot. This module
//! only decides; the engine moves the KV data.

/// One cached prompt.
#[derive(Debug, Clone, Default)]
struct Slot {
    tokens: Vec<i32>,
    last_used: u64,
}

/// What the engine should do for a prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// The sequence id (slot index) to evaluate the prompt into.
    pub slot: usize,
    /// Tokens at the start of the prompt already in that slot; the engine
    /// drops the slot's KV from here on and evaluates the prompt's rest.
    pub reuse: usize,
}

/// A bounded set of cached prompts.
#[derive(Debug, Clone)]
pub struct PrefixCache {
    slots: Vec<Slot>,
    clock: u64,
    enabled: bool,
}

impl PrefixCache {
    /// `slots` cached prompts (sequence ids `0..slots`); `enabled = false`
    /// never reuses anything (for measuring the cache's effect).
    pub fn new(slots: usize, enabled: bool) -> Self {
        PrefixCache { slots: vec![Slot::default(); slots.max(1)], clock: 0, enabled }
    }

    /// Number of slots (sequence ids `0..len`).
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Always false: there is at least one slot.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Choose the slot for `prompt`. At least one token is always left to
    /// evaluate (the last one's logits start the answer).
    pub fn plan(&self, prompt: &[i32]) -> Plan {
        let cap = prompt.len().saturating_sub(1);
        let best = self
            .slots
            .iter()
            .enumerate()
            .map(|(i, s)| (i, if self.enabled { common_prefix(&s.tokens, prompt).min(cap) } else { 0 }))
            .max_by_key(|&(i, n)| (n, std::cmp::Reverse(self.slots[i].last_used)));
        match best {
            Some((slot, reuse)) if reuse > 0 => Plan { slot, reuse },
            _ => {
                let lru = (0..self.slots.len()).min_by_key(|&i| self.slots[i].last_used).unwrap_or(0);
                Plan { slot: lru, reuse: 0 }
            }
        }
    }

    /// Record that `slot` now holds `prompt` (after a successful evaluation).
    pub fn store(&mut self, slot: usize, prompt: &[i32]) {
        self.clock += 1;
        let s = &mut self.slots[slot];
        s.tokens.clear();
        s.tokens.extend_from_slice(prompt);
        s.last_used = self.clock;
    }

    /// Forget `slot` (its KV was cleared, e.g. to make room).
    pub fn forget(&mut self, slot: usize) {
        self.slots[slot].tokens.clear();
        self.slots[slot].last_used = 0;
    }

    /// Slots other than `keep` that hold something, least recently used first.
    pub fn evictable(&self, keep: usize) -> Vec<usize> {
        let mut v: Vec<usize> = (0..self.slots.len()).filter(|&i| i != keep && !self.slots[i].tokens.is_empty()).collect();
        v.sort_by_key(|&i| self.slots[i].last_used);
        v
    }
}

/// Length of the longest common prefix of `a` and `b`.
pub fn common_prefix(a: &[i32], b: &[i32]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_prefix_wins_and_one_token_is_left() {
        let mut c = PrefixCache::new(2, true);
        assert_eq!(c.plan(&[1, 2, 3]), Plan { slot: 0, reuse: 0 });
        c.store(0, &[1, 2, 3, 4]);
        // Same prompt again: all but the last token reused.
        assert_eq!(c.plan(&[1, 2, 3, 4]), Plan { slot: 0, reuse: 3 });
        assert_eq!(c.plan(&[1, 2, 9]), Plan { slot: 0, reuse: 2 });
        // Nothing shared: the empty (least recently used) slot.
        assert_eq!(c.plan(&[7, 8]), Plan { slot: 1, reuse: 0 });
        c.store(1, &[7, 8]);
        // Nothing shared again: slot 0 is now the least recently used.
        assert_eq!(c.plan(&[5]), Plan { slot: 0, reuse: 0 });
        assert_eq!(c.evictable(1), vec![0]);
        c.forget(0);
        assert!(c.evictable(1).is_empty());
    }

    #[test]
    fn disabled_never_reuses() {
        let mut c = PrefixCache::new(1, false);
        c.store(0, &[1, 2, 3]);
        assert_eq!(c.plan(&[1, 2, 3]), Plan { slot: 0, reuse: 0 });
    }
}
