//! The fuzz properties of `fuzz/props.rs`, driven by proptest generators in
//! the normal test suite (the same functions the cargo-fuzz targets call).
//! `LUCY_FUZZ_CASES` sets the cases per property (default 256);
//! `scripts/fuzz.sh` raises it to fill a time budget when cargo-fuzz is not
//! available.

#[path = "../fuzz/props.rs"]
mod props;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

fn cases() -> u32 {
    std::env::var("LUCY_FUZZ_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(256)
}

fn run<S: Strategy>(s: S, f: impl Fn(S::Value)) {
    let mut runner = TestRunner::new(Config { cases: cases(), failure_persistence: None, ..Config::default() });
    runner
        .run(&s, |v| {
            f(v);
            Ok(())
        })
        .unwrap();
}

/// Seed files of a target, whole or cut, as generator material.
fn seeds(target: &str) -> Vec<Vec<u8>> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus").join(target);
    let mut out: Vec<Vec<u8>> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| std::fs::read(e.ok()?.path()).ok())
        .collect();
    out.sort();
    assert!(!out.is_empty(), "no seeds in {}", dir.display());
    out
}

/// A seed with a few byte-level mutations (flip, insert, delete, splice
/// from another seed), like a mutational fuzzer's first steps.
fn mutated(target: &'static str) -> impl Strategy<Value = Vec<u8>> {
    let s = seeds(target);
    let n = s.len();
    (0..n, 0..n, prop::collection::vec((any::<u8>(), any::<usize>(), any::<u8>()), 0..8)).prop_map(
        move |(a, b, muts)| {
            let mut v = s[a].clone();
            for (kind, at, byte) in muts {
                let at = if v.is_empty() { 0 } else { at % (v.len() + 1) };
                match kind % 4 {
                    0 if at < v.len() => v[at] ^= byte,
                    1 => v.insert(at, byte),
                    2 if at < v.len() => {
                        v.remove(at);
                    }
                    _ => {
                        let other = &s[b];
                        let from = if other.is_empty() { 0 } else { at % other.len() };
                        let piece: Vec<u8> = other[from..].iter().take(byte as usize % 64).copied().collect();
                        v.splice(at..at, piece);
                    }
                }
            }
            v
        },
    )
}

#[test]
fn dbmodel_parse_and_validate() {
    run(mutated("dbmodel"), |v| props::dbmodel(&v));
}

#[test]
fn ddl_import() {
    run(mutated("ddl_import"), |v| props::ddl(&v));
}

#[test]
fn sql_guard_against_the_scope_resolver() {
    run(mutated("sql_guard"), |v| props::sql_guard(&v));
}

#[test]
fn llm_answer_parsing() {
    run(mutated("llm_answer"), |v| props::llm_answer(&v));
}

#[test]
fn every_seed_passes_whole() {
    for (t, f) in [
        ("dbmodel", props::dbmodel as fn(&[u8])),
        ("ddl_import", props::ddl),
        ("sql_guard", props::sql_guard),
        ("llm_answer", props::llm_answer),
    ] {
        for s in seeds(t) {
            f(&s);
        }
    }
}
