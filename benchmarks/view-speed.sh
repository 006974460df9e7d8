#!/usr/bin/env bash
# GenerateView speed of the binary a user builds (README: `cargo build`,
# target/debug/lucy), on the five DDO relevant sets of tests/cpsat_baseline.rs.
# Prints one row per set: the median and min of `solve_ms` (as `lucy view
# --json` reports it) over R runs, and CP-SAT's time on the same set when
# CP-SAT's rows are given (`cpsat_baseline.py --json` on the five sets, as
# tests/cpsat_baseline.rs exports them with LUCY_CPSAT_EXPORT=FILE; several
# runs' rows in one file give CP-SAT's median per set).
#
#   benchmarks/view-speed.sh [--lucy BIN] [--runs R] [--cpsat CPSAT_JSON]
set -euo pipefail
cd "$(dirname "$0")/.."
lucy=target/debug/lucy
runs=21
cpsat=""
while [ $# -gt 0 ]; do
  case "$1" in
    --lucy) lucy=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --cpsat) cpsat=$2; shift 2 ;;
    *) echo "view-speed.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
sets=("CLIENT,DATACENTER" "COMPUTE,CLIENT" "CLIENT,DATACENTER,PAYMENT,RETENTION" "LOCATION,RESOURCEPOOL,PAYMENT" "DATACENTER,RSPOOL2CLIENT")
echo "| relevant set | lucy view median ms | min ms | CP-SAT median ms | CP-SAT / lucy |"
echo "|---|---|---|---|---|"
for s in "${sets[@]}"; do
  for _ in $(seq "$runs"); do
    "$lucy" view --model dbmodels/ddo.json --tables "$s" --json |
      python3 -c 'import json, sys; print(json.load(sys.stdin)["solve_ms"])'
  done | python3 -c '
import json, statistics, sys
s, cpsat = sys.argv[1], sys.argv[2]
ms = [float(l) for l in sys.stdin if l.strip()]
med = statistics.median(ms)
cp = ""
ratio = ""
if cpsat:
    rows = [json.loads(l) for l in open(cpsat) if l.strip()]
    want = sorted(s.split(","))
    hit = [r for r in rows if sorted(r.get("query", [])) == want]
    if hit:
        c = statistics.median(r["cpsat_ms"] for r in hit)
        cp = f"{c:.2f}"
        ratio = f"{c / med:.1f}x"
print(f"| {s} | {med:.3f} | {min(ms):.3f} | {cp} | {ratio} |")
' "$s" "$cpsat"
done
