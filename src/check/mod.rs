//! Checking SQL against the model: fan-out-safe aggregates over the view
//! ([`fanout`]), `DISTINCT` for lists of rows the view repeats
//! ([`distinct`]) and, for SQL over the base tables, `lucy check`; the
//! model checked against the data: value inclusion of proposed
//! relationships ([`inclusion`], `lucy model suggest --relationships`).

pub mod aggregates;
pub mod base;
pub mod counted;
pub mod distinct;
pub mod fanout;
pub mod grouping;
pub mod inclusion;
pub mod literals;

pub use base::{check_sql, CheckReport, Finding, FindingKind};

#[cfg(test)]
#[path = "fixture_tests.rs"]
mod fixture;
