//! `lucy bench`: benchmark suites, metrics, per-phase failure attribution
//! and reports (see `docs/benchmarks.md`).
//!
//! - [`suite`]: suite files and their questions;
//! - [`metrics`]: ex, esx, coverage (eq. 10), join accuracy;
//! - [`oracle`]: GenerateView on the gold SQL's tables, mismatch classes;
//! - [`instances`]: the gold query's table instances (aliases in roles);
//! - [`attribution`]: which phase made a question fail;
//! - [`run`]: the parallel, order-preserving runner ([`progress`]: its bar);
//! - [`summary`]: suite-level aggregates;
//! - [`meta`]: what `results.json` holds (run metadata, summary, results);
//! - [`report`]: the Markdown report.

pub mod attribution;
pub mod engine;
pub mod instances;
pub mod meta;
pub mod methods;
pub mod metrics;
pub mod oracle;
pub mod progress;
pub mod report;
pub mod run;
pub mod suite;
pub mod summary;

pub use meta::BenchRun;
pub use run::{run_suite, Method, Oracle, QuestionResult, RunOptions};
pub use suite::{Question, Suite};
pub use summary::Summary;
