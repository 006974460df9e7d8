#!/usr/bin/env bash
# `lucy ask` as a user runs it (issue 47): DDO questions, one process each,
# with the embedded default model; per question the model time (the LLM
# calls' wall time summed), prompt tokens evaluated / reused / restored from
# the disk cache, completion tokens, answers cut, LLM calls, the wall time
# and whether the rows are the gold SQL's. Prints a Markdown table.
#
#   benchmarks/ask-speed.sh LABEL LUCY_BINARY CACHE_DIR [QUESTION_NUMBERS] [-- extra lucy ask flags]
#
# CACHE_DIR becomes LUCY_CACHE (the prompt cache on disk lives in
# CACHE_DIR/prefix); the model is read from LUCY_MODEL_DIR, default
# ~/.cache/lucy/models. QUESTION_NUMBERS: lines of benchmarks/questions/ddo.jsonl,
# comma-separated (default 1,2,3,4: the README's Q1, then three others).
# ASK_SUITE=acme asks ACME's questions (dbmodels/acme.json over
# ../shared/benchmarks/acme/acme_small.sqlite) instead of DDO's.
# CPU heavy: run it alone (`flock /tmp/lucy-model.lock ...`) and keep the
# `uptime` lines it prints.
set -euo pipefail
cd "$(dirname "$0")/.."
label=$1 bin=$2 cache=$3
qs=${4:-1,2,3,4}
shift 3
[ $# -gt 0 ] && shift
[ "${1:-}" = "--" ] && shift
case "${ASK_SUITE:-ddo}" in
  ddo) model=dbmodels/ddo.json db=dbmodels/ddo.sqlite questions=benchmarks/questions/ddo.jsonl ;;
  acme) model=dbmodels/acme.json db=../shared/benchmarks/acme/acme_small.sqlite questions=../shared/benchmarks/acme/acme_questions.jsonl ;;
  *) echo "ask-speed.sh: ASK_SUITE is ddo or acme" >&2; exit 2 ;;
esac
export ASK_DB="$db" ASK_QUESTIONS="$questions"
export LUCY_MODEL_DIR="${LUCY_MODEL_DIR:-$HOME/.cache/lucy/models}"
export LUCY_CACHE="$cache"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "$label: binary $bin; load before: $(uptime | sed 's/.*load/load/')"
echo
echo "| $label | question | model s | wall s | calls | prompt evaluated | reused | from disk | completion | cut | gold rows |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"
IFS=, read -ra nums <<< "$qs"
for i in "${nums[@]}"; do
  s=$(date +%s.%N)
  set +e
  "$bin" ask --model "$model" --execute "$db" --quiet --json --trace "$out/$i.trace.json" "$@" \
    "$(sed -n "${i}p" "$questions" | python3 -c 'import json,sys; print(json.load(sys.stdin)["question"])')" \
    > "$out/$i.json" 2> "$out/$i.err"
  set -e
  e=$(date +%s.%N)
  python3 - "$out" "$i" "$s" "$e" "$label" <<'PY'
import json, os, sqlite3, sys
out, i, s, e, label = sys.argv[1:]
q = json.loads(open(os.environ["ASK_QUESTIONS"]).read().splitlines()[int(i) - 1])
try:
    t = json.load(open(f"{out}/{i}.trace.json"))
except Exception:
    t = {}
calls = []
def walk(x):
    if isinstance(x, dict):
        if "phase" in x and "usage" in x and "messages" in x:
            calls.append(x)
        for v in x.values():
            walk(v)
    elif isinstance(x, list):
        for v in x:
            walk(v)
walk(t)
calls = [c for c in calls if c.get("requests", 0) > 0]
loc = lambda c, k: (c.get("local") or {}).get(k, 0)
model_s = sum(c.get("latency_ms", 0) for c in calls) / 1000
ev = sum(loc(c, "prompt_evaluated") for c in calls)
re_ = sum(loc(c, "prompt_reused") for c in calls)
disk = sum(loc(c, "disk_reused") for c in calls)
comp = sum(c["usage"]["completion_tokens"] for c in calls)
cut = sum(c.get("truncated", 0) for c in calls)
try:
    a = json.load(open(f"{out}/{i}.json"))
    rows = set(map(tuple, ((a.get("rows") or {}).get("rows") or [])))
    gold = set(map(tuple, sqlite3.connect(f"file:{os.environ['ASK_DB']}?mode=ro", uri=True).execute(q["gold_sql"]).fetchall()))
    ok = "yes" if rows == gold else "no"
except Exception:
    ok = "error"
print(f"| {label} | {q['id']} | {model_s:.1f} | {float(e) - float(s):.1f} | {len(calls)} | {ev} | {re_} | {disk} | {comp} | {cut} | {ok} |")
PY
done
echo
echo "load after: $(uptime | sed 's/.*load/load/')"
