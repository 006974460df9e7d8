#!/usr/bin/env bash
# The test command: install build prerequisites, then run every test
# (unit, integration, solver-tests, golden tests) in the one `dev` profile.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo test --all-targets "$@"
