#!/usr/bin/env bash
# A Python venv with the pinned pyspark (scripts/spark-requirements.txt:
# version and sha256 of every package, installed with --require-hashes),
# for the Spark Connect server of scripts/db.sh. Idempotent: quiet when the
# venv already has that version. Prints nothing else.
#   ${LUCY_CACHE:-~/.cache/lucy}/venv-spark/bin/python
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
VERSION="4.3.0"
VENV="${LUCY_CACHE:-$HOME/.cache/lucy}/venv-spark"
if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "import pyspark, sys; sys.exit(pyspark.__version__ != '$VERSION')" 2>/dev/null; then
  exit 0
fi
if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
  echo "spark-venv: installing python3-venv" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-venv >/dev/null
fi
echo "spark-venv: installing pyspark $VERSION into $VENV (about 460 MB)" >&2
rm -rf "$VENV"
python3 -m venv "$VENV"
"$VENV/bin/pip" install --quiet --disable-pip-version-check --require-hashes -r "$here/spark-requirements.txt"
