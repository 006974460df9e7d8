#!/usr/bin/env bash
# Rebuild benchmarks/RESULTS.md from the section files each runner writes
# into benchmarks/results/ (solver.md: solve_bench; oracle-*.md: lucy bench
# --oracle tables; plan.md: plan_bench; crush.md: crush_bench; check.md: check_gold; suggest.md: suggest_bench; engines.md:
# lucy bench --database on the scripts/db.sh servers; query-plan.md: lucy bench --set query.form=plan|auto;
# speed.md: benchmarks/ask-speed.sh and lucy bench timings; dbt.md: lucy model import --dbt; methods.md: lucy bench --method
# crush/rasl/ta-sql/fewshot recordings; hardening.md: import_bench
# and deadline_bench; build.md: cargo build --timings via build-timings.py). The summary at the top is
# benchmarks/results/summary.md, kept by hand from those sections.
set -euo pipefail
cd "$(dirname "$0")"
{
  echo "# lucy benchmark results"
  echo
  echo "Assembled $(date -u +%Y-%m-%d) at commit \`$(git rev-parse --short HEAD)\` by \`benchmarks/make-results.sh\` from \`benchmarks/results/*.md\`;"
  echo "each section names the command and commit that produced it. Machine: 2 cores, 24 GiB, shared with builds (times are noisy)."
  echo
  cat results/summary.md
  for f in build solver cpsat plan oracle-tables oracle-joins crush check suggest engines hardening embedded query-plan speed dbt methods serve; do
    echo
    echo "---"
    echo
    # Demote each section's headings one level under this document's title.
    sed 's/^#/##/' "results/$f.md"
  done
} > RESULTS.md
echo "wrote benchmarks/RESULTS.md"
