//! Numbers users give lucy (time limits, temperatures, weights): checked
//! once where they enter (the CLI's value parsers, the library's request
//! types), with the accepted range in the message; and seconds turned into
//! durations and deadlines without ever panicking (`Duration::from_secs_f64`
//! panics on ∞, NaN and 1e308; `Instant + Duration` panics on overflow).

use std::time::{Duration, Instant};

/// The longest time limit lucy accepts, in seconds (one day).
pub const MAX_SECONDS: f64 = 86_400.0;

/// The shortest time limit lucy accepts, in seconds.
pub const MIN_SECONDS: f64 = 0.001;

/// `value` when it is finite and within `[lo, hi]`; otherwise a message
/// naming `what`, the range and what was given.
pub fn check_range(what: &str, value: f64, lo: f64, hi: f64) -> Result<f64, String> {
    if value.is_finite() && (lo..=hi).contains(&value) {
        Ok(value)
    } else {
        Err(format!("{what} must be a finite number from {} to {}, got {}", show(lo), show(hi), show(value)))
    }
}

/// A time limit in seconds: finite, from [`MIN_SECONDS`] to [`MAX_SECONDS`].
pub fn check_seconds(what: &str, value: f64) -> Result<f64, String> {
    if value.is_finite() && (MIN_SECONDS..=MAX_SECONDS).contains(&value) {
        Ok(value)
    } else {
        Err(format!(
            "{what} must be a number of seconds from {MIN_SECONDS} to {MAX_SECONDS} (one day), got {}",
            show(value)
        ))
    }
}

/// A number for a message: `1e308`, not 309 digits.
fn show(v: f64) -> String {
    if v.is_finite() && v != 0.0 && !(1e-4..1e7).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// `secs` as a duration, clamped to `[0, MAX_SECONDS]`; NaN counts as 0.
/// For values that were not checked (library callers): never panics.
pub fn duration(secs: f64) -> Duration {
    if secs > 0.0 {
        Duration::from_secs_f64(secs.min(MAX_SECONDS))
    } else {
        Duration::ZERO
    }
}

/// `start + secs` (clamped like [`duration`]), never panicking.
pub fn deadline(start: Instant, secs: f64) -> Instant {
    let d = duration(secs);
    start.checked_add(d).unwrap_or(start)
}

/// Parse a flag's text as a number: the error says what was expected.
pub fn parse_f64(what: &str, text: &str) -> Result<f64, String> {
    text.trim().parse::<f64>().map_err(|_| format!("{what} must be a number, got {text:?}"))
}

/// Parse an integer flag within `[lo, hi]`.
pub fn parse_int(what: &str, text: &str, lo: u64, hi: u64) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(v) if (lo..=hi).contains(&v) => Ok(v),
        _ => Err(format!("{what} must be a whole number from {lo} to {hi}, got {text:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_finite_and_huge_seconds_never_panic() {
        for s in [f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 1e308, -1.0, 0.0] {
            let d = duration(s);
            assert!(d <= Duration::from_secs_f64(MAX_SECONDS));
            let _ = deadline(Instant::now(), s);
        }
        assert_eq!(duration(1.5), Duration::from_millis(1500));
    }

    #[test]
    fn checks_name_the_range() {
        assert_eq!(check_seconds("--time-limit", 2.0), Ok(2.0));
        let e = check_seconds("--time-limit", f64::INFINITY).unwrap_err();
        assert_eq!(e, "--time-limit must be a number of seconds from 0.001 to 86400 (one day), got inf");
        let e = check_range("--temperature", f64::NAN, 0.0, 2.0).unwrap_err();
        assert_eq!(e, "--temperature must be a finite number from 0 to 2, got NaN");
        assert!(parse_int("--samples", "0", 1, 100).unwrap_err().contains("from 1 to 100"));
        assert!(check_seconds("t", 1e308).unwrap_err().ends_with("got 1e308"));
        assert!(check_range("τ", 0.0, 1e-6, 1e6).unwrap_err().contains("from 1e-6 to 1000000, got 0"));
        assert_eq!(parse_int("--samples", "5", 1, 100), Ok(5));
    }
}
