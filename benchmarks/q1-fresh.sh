#!/usr/bin/env bash
# The README's main job, fresh (issue 23): `lucy ask` on DDO Q1 N times, one
# process each, no cassette, with whatever LLM lucy is configured with (the
# embedded default model when nothing is set). Prints a Markdown table: per
# run, the rows returned, whether they are the gold SQL's rows (as a set, on
# dbmodels/ddo.sqlite), the wall time and the SQL; then the machine.
#
#   benchmarks/q1-fresh.sh [N] [LUCY_BINARY]     (default 5, target/debug/lucy)
#
# CPU heavy (about 30 s a run on 2 cores): run it alone and keep the `uptime`
# lines it prints.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-5}
bin=${2:-target/debug/lucy}
q="List customers who use datacenters with names starting with 'dev'. Output clients and datacenters names"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); avx512: $(grep -q avx512f /proc/cpuinfo && echo yes || echo no); $(nproc) cores"
echo "before: $(uptime)"
echo
echo "| run | rows | the gold rows | wall | SQL |"
echo "|---|---|---|---|---|"
for i in $(seq 1 "$n"); do
  s=$(date +%s.%N)
  set +e
  "$bin" ask --model dbmodels/ddo.json --execute dbmodels/ddo.sqlite --quiet --json "$q" > "$out/$i.json" 2> "$out/$i.err"
  rc=$?
  set -e
  e=$(date +%s.%N)
  python3 - "$out/$i.json" "$i" "$rc" "$s" "$e" <<'PY'
import json, sqlite3, sys
path, i, rc, s, e = sys.argv[1:]
gold_sql = json.loads(open("benchmarks/questions/ddo.jsonl").readline())["gold_sql"]
gold = set(map(tuple, sqlite3.connect("file:dbmodels/ddo.sqlite?mode=ro", uri=True).execute(gold_sql).fetchall()))
try:
    a = json.load(open(path))
except Exception:
    a = {}
rows = (a.get("rows") or {}).get("rows") or []
got = set(map(tuple, rows))
ok = bool(rows) and got == gold and len(rows) == len(gold)
sql = (a.get("sql") or (a.get("failure") or {}).get("message") or f"exit {rc}").replace("|", "\\|").replace("\n", " ")
print(f"| {i} | {len(rows)} | {'yes' if ok else 'no'} | {float(e) - float(s):.1f} s | `{sql}` |")
PY
done
echo
echo "after: $(uptime)"
