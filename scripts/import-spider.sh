#!/usr/bin/env bash
# Regenerate dbmodels/spider/*.json: one dbModel per Spider dev database,
# introspected from the SpiderMan-built SQLite files (the databases the
# Spider benchmark executes on). tests/import_spider.rs checks that the
# committed files equal a fresh import, so run this after changing the
# SQLite importer and commit the result.
#
# Usage: scripts/import-spider.sh [SPIDER_SQLITE_DIR]   (equivalent to
# `cargo run -q -- model import --sqlite DB --name ID --out dbmodels/spider/ID.json`
# for every DB)
set -euo pipefail
cd "$(dirname "$0")/.."
src="${1:-../shared/benchmarks/spider/spiderman_dev_sqlite}"
out=dbmodels/spider
if ! ls "$src"/*.sqlite >/dev/null 2>&1; then
    echo "error: no *.sqlite files in $src (stage the Spider benchmark under ../shared/benchmarks/spider)" >&2
    exit 2
fi
mkdir -p "$out"
# Build once, then run the binary: one `cargo run` per database would
# re-check the build 20 times.
cargo build -q --bin lucy
lucy="${CARGO_TARGET_DIR:-target}/debug/lucy"
n=0
for db in "$src"/*.sqlite; do
    id="$(basename "$db" .sqlite)"
    "$lucy" model import --sqlite "$db" --name "$id" --out "$out/$id.json"
    n=$((n + 1))
done
echo "imported $n databases into $out" >&2
