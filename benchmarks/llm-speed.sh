#!/usr/bin/env bash
# Speed of lucy on the embedded model (issue 11): prints Markdown tables.
#
# 1. Per-question wall time of the three phases on DDO (median, p95), one
#    `lucy bench ddo --method lucy` process per row (the pipeline `lucy ask`
#    runs; one process keeps the model and its prefix cache, as `lucy bench`
#    and `lucy serve` do), with and without the prompt-prefix cache; prompt
#    tokens evaluated and reused, prefill/decode tok/s by phase.
# 2. `lucy ask` as a user runs it, one process per question (model load and
#    a cold cache included).
# 3. Raw prefill/decode tok/s at 1, 2 and auto threads, lucy's wall clock beside
#    llama.cpp's own counters for the same calls (benchmarks/llm_speed.rs).
#
#   benchmarks/llm-speed.sh [--limit N] [--ask N] [--threads T] [--raw-threads 1,2,auto] [--raw-reps N] [--skip-nocache] [--skip-raw]
#
#   --limit N        DDO questions in the bench rows (default 8; 24 = all)
#   --ask N          questions asked with `lucy ask`, one process each (default 2; 0 skips)
#   --threads T      llama.cpp threads for rows 1-2: a number, or auto (default:
#                    lucy's default, one thread per generated token and every
#                    core for prompts and batches, backing off under load)
#   --raw-threads L  thread counts of the raw rows (default 1,2,auto)
#   --raw-reps N     repetitions of each raw row, median reported (default 3)
#
# CPU heavy (about 20-40 s per question on one core): run it alone, note the
# `uptime` lines it prints beside the tables. Output goes to bench-out/speed/.
set -euo pipefail
cd "$(dirname "$0")/.."
limit=8 ask=2 threads=auto raw_threads=1,2,auto raw_reps=3 nocache=1 raw=1
while [ $# -gt 0 ]; do
  case "$1" in
    --limit) limit="$2"; shift 2 ;;
    --ask) ask="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --raw-threads) raw_threads="$2"; shift 2 ;;
    --raw-reps) raw_reps="$2"; shift 2 ;;
    --skip-nocache) nocache=0; shift ;;
    --skip-raw) raw=0; shift ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *) echo "llm-speed.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
model="${LUCY_MODEL_DIR:-${LUCY_CACHE:-$HOME/.cache/lucy}/models}/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
if [ -z "${LUCY_LLM_GGUF:-}" ] && [ ! -f "$model" ]; then
  echo "llm-speed.sh: no embedded model at $model; run scripts/fetch-model.sh (or set LUCY_LLM_GGUF)" >&2
  exit 2
fi
cargo build --quiet --bin lucy --example llm_speed
lucy=target/debug/lucy
out=bench-out/speed
rm -rf "$out" && mkdir -p "$out"
echo "commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src prompts || echo ' (+ local changes)')"
echo "load before: $(uptime)"

modes=(on)
[ "$nocache" = 1 ] && modes+=(off)
for cache in "${modes[@]}"; do
  flag=()
  [ "$cache" = off ] && flag=(--llm-no-prefix-cache)
  [ "$threads" = auto ] || flag+=(--llm-threads "$threads")
  start=$(date +%s)
  "$lucy" bench ddo --method lucy --limit "$limit" --no-progress "${flag[@]}" \
    --out "$out/cache-$cache" >"$out/cache-$cache.log" 2>&1 || { echo "lucy bench failed; see $out/cache-$cache.log" >&2; exit 1; }
  echo "cache $cache: $(( $(date +%s) - start )) s for $limit questions; load after: $(uptime)"
done

for i in $(seq 1 "$ask"); do
  q=$(sed -n "${i}p" benchmarks/questions/ddo.jsonl | python3 -c 'import json,sys; print(json.load(sys.stdin)["question"])')
  python3 - "$lucy" "$threads" "$out/ask-$i.json" "$q" <<'PY'
import json, subprocess, sys, time
lucy, threads, trace, q = sys.argv[1:]
t0 = time.time()
flag = [] if threads == "auto" else ["--llm-threads", threads]
p = subprocess.run([lucy, "ask", "--model", "dbmodels/ddo.json", "--execute", "dbmodels/ddo.sqlite",
                    *flag, "--trace", trace, q], capture_output=True, text=True)
json.dump({"wall_s": time.time() - t0, "exit": p.returncode}, open(trace + ".wall", "w"))
PY
done
echo "load after lucy ask: $(uptime)"

python3 - "$out" "$limit" "$ask" <<'PY'
import json, os, statistics, sys
out, limit, ask = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p * (len(v) - 1))))]

print("\n### Per question (`lucy bench ddo --method lucy`, one process)\n")
print("| prefix cache | questions | median s | p95 s | max s | phase | prompt tokens evaluated | reused | prefill tok/s | decode tokens | decode tok/s |")
print("|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|")
for cache in ("on", "off"):
    f = f"{out}/cache-{cache}/results.json"
    if not os.path.exists(f):
        continue
    qs = json.load(open(f))["questions"]
    walls = [q["cost"]["wall_ms"] / 1000 for q in qs]
    first = True
    for phase in ("match_tables", "query_view"):
        ev = re = pms = dms = dt = 0
        for q in qs:
            for name, c in q["cost"].get("phases", []):
                if name != phase:
                    continue
                ev += c.get("prefill_tokens", 0); re += c.get("prompt_reused", 0)
                pms += c.get("prefill_ms", 0); dms += c.get("decode_ms", 0); dt += c.get("decode_tokens", 0)
        head = f"| {cache} | {len(walls)} | {statistics.median(walls):.1f} | {pct(walls, 0.95):.1f} | {max(walls):.1f}" if first else "| | | | |"
        first = False
        print(f"{head} | {phase} | {ev:,} | {re:,} | {ev / pms * 1000 if pms else 0:.1f} | {dt:,} | {dt / dms * 1000 if dms else 0:.1f} |")
    print("| | per question: " + ", ".join(f"{q['id']} {q['cost']['wall_ms'] / 1000:.0f}" for q in qs) + " | | | | | | | | | |")

if ask:
    print("\n### `lucy ask`, one process per question (model load, cold cache)\n")
    print("| question | wall s | exit | MatchTables s | QueryView s | prompt tokens evaluated / reused |")
    print("|---|---:|---:|---:|---:|---:|")
    for i in range(1, ask + 1):
        w = json.load(open(f"{out}/ask-{i}.json.wall"))
        mt = qv = 0.0; ev = re = 0
        try:
            t = json.load(open(f"{out}/ask-{i}.json"))
            for ph in ("match_tables", "query_view"):
                c = (t.get(ph) or {}).get("cost") or {}
                if ph == "match_tables": mt = c.get("ms", 0) / 1000
                else: qv = c.get("ms", 0) / 1000
                ev += c.get("prefill_tokens", 0); re += c.get("prompt_reused", 0)
        except (OSError, ValueError):
            pass
        print(f"| {i} | {w['wall_s']:.1f} | {w['exit']} | {mt:.1f} | {qv:.1f} | {ev:,} / {re:,} |")
PY

if [ "$raw" = 1 ]; then
  echo
  echo "### Raw prefill/decode (benchmarks/llm_speed.rs)"
  echo
  target/debug/examples/llm_speed --threads "$raw_threads" --reps "$raw_reps"
  echo "load at the end: $(uptime)"
fi
