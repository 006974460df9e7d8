//! Solver correctness suites: every solver feature cross-checked against
//! brute force on small instances, plus golden tests on the paper's examples.
#[path = "../benchmarks/gen.rs"]
mod gen;

mod brute_force;
mod crush_brute;
mod ddo_golden;
mod merge_equal;
mod oracle_joins;
