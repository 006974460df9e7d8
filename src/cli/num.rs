//! Value parsers of the numeric flags: every number is checked when the
//! command line is parsed (finite, in range, the range in the message), so
//! `--time-limit inf` or `--temperature nan` is a usage error, never a
//! panic deep inside. The checks themselves are the library's
//! (`lucy::types::limits`), shared with the other front ends.

use lucy::types::limits::{check_range, check_seconds, parse_f64, parse_int};

/// A time limit in seconds (`--time-limit`, `--llm-timeout`).
pub fn seconds(s: &str) -> Result<f64, String> {
    check_seconds("the time limit", parse_f64("the time limit", s)?)
}

/// A sampling temperature: 0 to 2, the OpenAI API's range.
pub fn temperature(s: &str) -> Result<f64, String> {
    check_range("the temperature", parse_f64("the temperature", s)?, 0.0, 2.0)
}

/// CRUSH's soft-max temperature τ: positive.
pub fn tau(s: &str) -> Result<f64, String> {
    check_range("τ", parse_f64("τ", s)?, 1e-6, 1e6)
}

/// CRUSH's connectivity score γ: zero or positive.
pub fn gamma(s: &str) -> Result<f64, String> {
    check_range("γ", parse_f64("γ", s)?, 0.0, 1e6)
}

/// Sampled answers per prompt.
pub fn samples(s: &str) -> Result<usize, String> {
    parse_int("the number of samples", s, 1, 100).map(|v| v as usize)
}

/// A count of at least one (votes, items, jobs, candidates, budgets).
pub fn count(s: &str) -> Result<usize, String> {
    parse_int("the count", s, 1, 1_000_000).map(|v| v as usize)
}

/// Concurrent requests or workers.
pub fn workers(s: &str) -> Result<usize, String> {
    parse_int("the number of workers", s, 1, 256).map(|v| v as usize)
}

/// Retries of one LLM request.
pub fn retries(s: &str) -> Result<u32, String> {
    parse_int("the number of retries", s, 0, 20).map(|v| v as u32)
}

/// A token cap.
pub fn tokens(s: &str) -> Result<u32, String> {
    parse_int("the token cap", s, 1, 1_000_000).map(|v| v as u32)
}

/// `--execute`: a SQLite path or a server URL (errors never show a password).
pub fn database(s: &str) -> Result<lucy::sql::exec::Database, String> {
    lucy::sql::exec::Database::parse(s).map_err(|e| e.to_string())
}

/// `--max-result-bytes`: at least 1 KiB, at most 1 GiB.
pub fn result_bytes(s: &str) -> Result<usize, String> {
    let n: usize = s.trim().parse().map_err(|_| format!("`{s}` is not a number of bytes"))?;
    if !(1024..=1 << 30).contains(&n) {
        return Err(format!("{n} is out of range: give 1024 ..= 1073741824 bytes"));
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_of_every_kind() {
        for bad in ["inf", "1e308", "nan", "-1", "0", "x"] {
            assert!(seconds(bad).is_err(), "{bad}");
        }
        assert_eq!(seconds("0.2"), Ok(0.2));
        assert!(temperature("nan").unwrap_err().contains("from 0 to 2"));
        assert!(gamma("nan").is_err() && gamma("-1").is_err());
        assert_eq!(gamma("0"), Ok(0.0));
        assert!(tau("0").is_err());
        assert!(samples("0").is_err() && samples("101").is_err());
        assert!(workers("0").unwrap_err().contains("from 1 to 256"));
    }
}
