#!/usr/bin/env bash
# The test command: install build prerequisites, then run every test
# (unit, integration, solver-tests, golden tests) in the one `dev` profile.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/cpsat-venv.sh   # OR-Tools for tests/cpsat_baseline.rs (the paper's CP-SAT model)
cargo test --all-targets "$@"
