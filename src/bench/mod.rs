//! `lucy bench`: benchmark suites, metrics, per-phase failure attribution
//! and reports (see `docs/benchmarks.md`).
//!
//! - [`suite`]: suite files and their questions;
//! - [`metrics`]: ex, esx, coverage (eq. 10), join accuracy;
//! - [`oracle`]: GenerateView on the gold SQL's tables, mismatch classes;
//! - [`attribution`]: which phase made a question fail;
//! - [`run`]: the parallel, order-preserving runner;
//! - [`report`]: aggregates and the Markdown report.

pub mod attribution;
pub mod metrics;
pub mod oracle;
pub mod report;
pub mod run;
pub mod suite;

pub use report::{BenchRun, Summary};
pub use run::{run_suite, Method, Oracle, QuestionResult, RunOptions};
pub use suite::{Question, Suite};
