#!/usr/bin/env bash
# A Python venv with the pinned OR-Tools for benchmarks/cpsat_baseline.py
# (the Lucy paper's CP-SAT solver, side by side with lucy's). Idempotent:
# quiet when the venv already has that version. Prints nothing else.
#   ${LUCY_CACHE:-~/.cache/lucy}/venv-cpsat/bin/python
set -euo pipefail
ORTOOLS="ortools==9.15.6755"
VENV="${LUCY_CACHE:-$HOME/.cache/lucy}/venv-cpsat"
if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c 'import ortools, sys; sys.exit(ortools.__version__ != "9.15.6755")' 2>/dev/null; then
  exit 0
fi
if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
  echo "cpsat-venv: installing python3-venv" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-venv >/dev/null
fi
echo "cpsat-venv: installing $ORTOOLS into $VENV" >&2
python3 -m venv "$VENV"
"$VENV/bin/pip" install --quiet --disable-pip-version-check "$ORTOOLS"
