#!/usr/bin/env bash
# Run every fuzz property for a bounded time (default 60 s per target;
# `--seconds N` to change it). Targets: dbmodel, ddl_import, sql_guard,
# llm_answer (fuzz/props.rs says what each must hold).
#
# With cargo-fuzz installed and a toolchain that builds it (nightly, or
# stable with RUSTC_BOOTSTRAP=1), each target runs coverage-guided under
# libFuzzer from its committed seed corpus (fuzz/corpus/<target>) for the
# budget. Otherwise the same properties run under proptest
# (tests/fuzz_props.rs) with as many cases as fit the budget. Exit status
# non-zero on the first failing property.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=60
if [[ "${1:-}" == "--seconds" ]]; then secs="${2:?--seconds N}"; fi
targets=(dbmodel ddl_import sql_guard llm_answer)

if [[ "${LUCY_FUZZ_ENGINE:-auto}" != proptest ]] && cargo fuzz --version >/dev/null 2>&1; then
    for t in "${targets[@]}"; do
        echo "== cargo fuzz run $t (${secs} s)"
        # A private copy of the corpus: new inputs stay out of the repo.
        work="fuzz/work/$t"; mkdir -p "$work"
        RUSTC_BOOTSTRAP="${RUSTC_BOOTSTRAP:-1}" cargo fuzz run "$t" "$work" "fuzz/corpus/$t" -- \
            -max_total_time="$secs" -rss_limit_mb=4096 -timeout=10
    done
    exit 0
fi

echo "cargo-fuzz is not available: running the fuzz properties under proptest (tests/fuzz_props.rs)"
# Calibrate: time a small run, then scale the case count to the budget.
cargo test --quiet --test fuzz_props --no-run
start=$(date +%s.%N)
LUCY_FUZZ_CASES=64 cargo test --quiet --test fuzz_props >/dev/null
took=$(echo "$(date +%s.%N) - $start" | bc)
per_target=$(echo "$took / ${#targets[@]}" | bc -l)
cases=$(echo "c = 64 * $secs / ($per_target + 0.001); if (c < 64) 64 else c" | bc)
cases=${cases%.*}
echo "== proptest: $cases cases per property (calibrated: 64 cases took ${took} s for all four)"
LUCY_FUZZ_CASES="$cases" LUCY_GUARD_CASES="$((cases / 4 + 1))" \
    cargo test --quiet --test fuzz_props --test guard_scopes -- --nocapture
