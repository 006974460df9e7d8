//! Retry policy (exponential backoff with jitter, `Retry-After`) and the
//! concurrency limit shared by every request of one client.

use std::sync::{Condvar, Mutex};
use std::time::Duration;

use rand::Rng;

/// When and how long to wait before retrying a failed request.
#[derive(Debug, Clone, Copy)]
pub struct Backoff {
    /// Delay before the first retry (before jitter).
    pub base: Duration,
    /// Cap on any one sleep, including a server-requested `Retry-After`.
    pub max: Duration,
}

impl Backoff {
    /// Sleep before retry number `retry` (0 for the first retry).
    ///
    /// A server's `Retry-After` wins over the computed delay (capped at
    /// `max`), because a rate limiter that says when to come back knows best.
    /// Otherwise `base * 2^retry`, capped, scaled by a random factor in
    /// [0.5, 1] so that parallel clients do not retry in lockstep.
    pub fn delay(&self, retry: u32, retry_after: Option<Duration>, jitter: f64) -> Duration {
        if let Some(ra) = retry_after {
            return ra.min(self.max);
        }
        let exp = self.base.saturating_mul(1u32.checked_shl(retry.min(30)).unwrap_or(u32::MAX));
        exp.min(self.max).mul_f64(jitter.clamp(0.5, 1.0))
    }

    /// [`Backoff::delay`] with a fresh random jitter.
    pub fn delay_random(&self, retry: u32, retry_after: Option<Duration>) -> Duration {
        self.delay(retry, retry_after, rand::rng().random_range(0.5..=1.0))
    }
}

/// Parse a `Retry-After` header value given in seconds (the form rate
/// limiters use). HTTP dates are ignored: the computed backoff applies.
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    let v = value.trim().parse::<f64>().ok()?;
    (v.is_finite() && v >= 0.0).then(|| Duration::from_secs_f64(v))
}

/// Whether an HTTP status is worth retrying: rate limiting and server errors.
pub fn retryable_status(status: u16) -> bool {
    status == 429 || status == 408 || (500..=599).contains(&status)
}

/// A counting semaphore: at most `limit` holders at once.
#[derive(Debug)]
pub struct Limiter {
    in_use: Mutex<usize>,
    freed: Condvar,
    limit: usize,
}

/// Held while one request is in flight; releases its slot on drop.
pub struct Permit<'a>(&'a Limiter);

impl Limiter {
    /// A limiter allowing `limit` (at least 1) concurrent holders.
    pub fn new(limit: usize) -> Self {
        Limiter { in_use: Mutex::new(0), freed: Condvar::new(), limit: limit.max(1) }
    }

    /// Wait for a free slot.
    pub fn acquire(&self) -> Permit<'_> {
        // A poisoned lock only means another request thread panicked while
        // counting; the count itself is still meaningful.
        let mut n = self.in_use.lock().unwrap_or_else(|p| p.into_inner());
        while *n >= self.limit {
            n = self.freed.wait(n).unwrap_or_else(|p| p.into_inner());
        }
        *n += 1;
        Permit(self)
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        let mut n = self.0.in_use.lock().unwrap_or_else(|p| p.into_inner());
        *n = n.saturating_sub(1);
        self.0.freed.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn backoff_doubles_and_caps() {
        let b = Backoff { base: Duration::from_millis(100), max: Duration::from_secs(1) };
        assert_eq!(b.delay(0, None, 1.0), Duration::from_millis(100));
        assert_eq!(b.delay(1, None, 1.0), Duration::from_millis(200));
        assert_eq!(b.delay(3, None, 1.0), Duration::from_millis(800));
        assert_eq!(b.delay(4, None, 1.0), Duration::from_secs(1));
        assert_eq!(b.delay(60, None, 1.0), Duration::from_secs(1));
        assert_eq!(b.delay(1, None, 0.5), Duration::from_millis(100));
        // Jitter stays within [0.5, 1] of the nominal delay.
        for _ in 0..100 {
            let d = b.delay_random(2, None);
            assert!(d >= Duration::from_millis(200) && d <= Duration::from_millis(400), "{d:?}");
        }
    }

    #[test]
    fn retry_after_wins_but_is_capped() {
        let b = Backoff { base: Duration::from_millis(100), max: Duration::from_secs(5) };
        assert_eq!(b.delay(0, Some(Duration::from_secs(2)), 1.0), Duration::from_secs(2));
        assert_eq!(b.delay(0, Some(Duration::from_secs(120)), 1.0), Duration::from_secs(5));
        assert_eq!(parse_retry_after(" 3 "), Some(Duration::from_secs(3)));
        assert_eq!(parse_retry_after("0.5"), Some(Duration::from_millis(500)));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        assert_eq!(parse_retry_after("-1"), None);
    }

    #[test]
    fn statuses() {
        for s in [429, 500, 502, 503, 504, 408] {
            assert!(retryable_status(s), "{s}");
        }
        for s in [400, 401, 403, 404, 422] {
            assert!(!retryable_status(s), "{s}");
        }
    }

    #[test]
    fn limiter_bounds_concurrency() {
        let lim = Limiter::new(2);
        let current = AtomicUsize::new(0);
        let peak = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    let _p = lim.acquire();
                    let now = current.fetch_add(1, Ordering::SeqCst) + 1;
                    peak.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(5));
                    current.fetch_sub(1, Ordering::SeqCst);
                });
            }
        });
        let peak = peak.load(Ordering::SeqCst);
        assert!((1..=2).contains(&peak), "peak {peak}");
    }
}
