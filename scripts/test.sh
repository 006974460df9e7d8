#!/usr/bin/env bash
# The test command: install build prerequisites, then run every test
# (unit, integration, solver-tests, golden tests) in the one `dev` profile.
set -euo pipefail
cd "$(dirname "$0")/.."
started=()
scripts/setup.sh
scripts/cpsat-venv.sh   # OR-Tools for tests/cpsat_baseline.rs (the paper's CP-SAT model)
# PostgreSQL and MariaDB for tests/db_servers.rs: installed, started and
# loaded with DDO and ACME by the project (idempotent; ~30 s on a fresh machine).
# Servers this run starts are stopped when it ends; running ones are left up.
for e in postgres mysql; do
  if ! scripts/db.sh status "$e" >/dev/null 2>&1; then started+=("$e"); fi
done
stop_started() { for e in "${started[@]}"; do scripts/db.sh stop "$e" || true; done; }
trap stop_started EXIT
scripts/db.sh start
scripts/db.sh load ddo
scripts/db.sh load acme
export LUCY_DB_TESTS=1
scripts/setup-serve-tests.sh   # chromium, playwright-core, schemathesis for tests/serve_api.rs
export LUCY_REQUIRE_SERVE_TOOLS=1
cargo test --all-targets "$@"
