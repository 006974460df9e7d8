#!/usr/bin/env bash
# Speed of `lucy ask` on the embedded model over DDO: per-question wall time
# (median, p95) with and without the prompt-prefix cache, read from
# `lucy bench ddo` runs, plus raw prefill/decode tokens per second at 1 and 2
# threads beside llama.cpp's own counters (benchmarks/llm_speed.rs).
#
#   benchmarks/llm-speed.sh [N]      # first N DDO questions (default: all 21)
#
# CPU heavy (minutes per question on 2 cores): note `uptime` beside the table.
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-21}"
cargo build --quiet
lucy=target/debug/lucy
out=bench-out/speed
mkdir -p "$out"
echo "load before: $(uptime)"
for cache in on off; do
  flag=()
  [ "$cache" = off ] && flag=(--llm-no-prefix-cache)
  "$lucy" bench ddo --method lucy --limit "$n" --no-progress "${flag[@]}" --out "$out/cache-$cache" >/dev/null
done
echo "load after the bench runs: $(uptime)"
python3 - "$out" <<'PY'
import json, sys, statistics
out = sys.argv[1]
print("| prefix cache | questions | median s | p95 s | prompt tokens evaluated | reused | prefill tok/s | decode tok/s |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for cache in ("on", "off"):
    r = json.load(open(f"{out}/cache-{cache}/results.json"))
    qs = r["runs"][0]["questions"] if "runs" in r else r["questions"]
    walls = sorted(q["cost"]["wall_ms"] / 1000 for q in qs)
    p95 = walls[min(len(walls) - 1, int(round(0.95 * (len(walls) - 1))))]
    ev = re = pms = dms = dt = 0
    for q in qs:
        for _, c in q["cost"].get("phases", []):
            ev += c.get("prefill_tokens", 0); re += c.get("prompt_reused", 0)
            pms += c.get("prefill_ms", 0); dms += c.get("decode_ms", 0); dt += c.get("decode_tokens", 0)
    print(f"| {cache} | {len(walls)} | {statistics.median(walls):.1f} | {p95:.1f} | {ev} | {re} | {ev / pms * 1000 if pms else 0:.1f} | {dt / dms * 1000 if dms else 0:.1f} |")
PY
cargo run --quiet --config 'profile.dev.package.lucy.opt-level=3' --example llm_speed -- --threads 1,2
echo "load at the end: $(uptime)"
