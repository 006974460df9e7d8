//! Solver correctness suites: every solver feature cross-checked against
//! brute force on small instances, plus golden tests on the paper's examples.
mod crush_brute;
mod brute_force;
mod ddo_golden;
mod oracle_joins;
