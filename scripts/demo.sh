#!/usr/bin/env bash
# The main job on a fresh machine: install build prerequisites, build lucy,
# check the paper's DDO model, and solve the paper's three DDO questions
# (Q1–Q3) into join views that run on the DDO sample database, then answer
# Q1 end to end with `lucy ask`, rows included: on the LLM endpoint when one
# is configured (LUCY_LLM_URL + LUCY_LLM_MODEL, key in LUCY_API_KEY or
# OPENAI_API_KEY), otherwise on the embedded model (Qwen2.5-Coder-1.5B,
# fetched once by scripts/fetch-model.sh, run in-process by llama.cpp).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo build --quiet
lucy=target/debug/lucy
model=dbmodels/ddo.json
db=dbmodels/ddo.sqlite

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "lucy model check $model"
$lucy model check "$model"

step "Q1: clients and the datacenters whose resources they use (m:m through RSPOOL2CLIENT, never via LOCATION)"
$lucy view --model "$model" --tables CLIENT,DATACENTER --attrs CLIENT.name,DATACENTER.name

step "Q2: resource pools with CPU overhead limit vs runtime usage (snowflake branches, LEFT JOIN)"
$lucy view --model "$model" --tables RESOURCEPOOL,CCPU,RCPU --attrs RESOURCEPOOL.name,CCPU.overheadlimit,RCPU.overallusage

step "Q3: total tax payments, TAX + SUPERCHARGE (star through PAYAMOUNT)"
$lucy view --model "$model" --tables PAYMENT,TAX,SUPERCHARGE --attrs TAX.rate,SUPERCHARGE.reason

q1="List customers who use datacenters with names starting with 'dev'. Output clients and datacenters names"
if [ -n "${LUCY_LLM_URL:-}" ] && [ -n "${LUCY_LLM_MODEL:-}" ]; then
  step "lucy ask (LLM at $LUCY_LLM_URL): $q1"
  $lucy ask --model "$model" --llm-url "$LUCY_LLM_URL" --llm-model "$LUCY_LLM_MODEL" --execute "$db" "$q1"
else
  step "fetch the embedded model (1.1 GB, once)"
  scripts/fetch-model.sh
  step "lucy ask on the embedded model: $q1"
  $lucy ask --model "$model" --execute "$db" "$q1"
fi
