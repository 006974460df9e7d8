#!/usr/bin/env bash
# Install what the `lucy serve` tests need besides Rust, into
# ${LUCY_SERVE_TOOLS:-~/.cache/lucy}: Debian's chromium (the browser test),
# playwright-core from npm (drives it), schemathesis from PyPI in a venv
# (fuzzes the API against /openapi.json). Idempotent; quiet when present.
set -euo pipefail
TOOLS="${LUCY_SERVE_TOOLS:-$HOME/.cache/lucy}"
PLAYWRIGHT_CORE=1.65.1
SCHEMATHESIS=4.32.5
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
need=()
installed chromium || need+=(chromium)
command -v node >/dev/null 2>&1 || need+=(nodejs)
command -v npm >/dev/null 2>&1 || need+=(npm)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || need+=(python3-venv)
if [ ${#need[@]} -gt 0 ]; then
  echo "setup-serve-tests: installing ${need[*]}" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
mkdir -p "$TOOLS/node"
if ! grep -qs "\"version\": \"$PLAYWRIGHT_CORE\"" "$TOOLS/node/node_modules/playwright-core/package.json"; then
  echo "setup-serve-tests: npm install playwright-core@$PLAYWRIGHT_CORE" >&2
  [ -f "$TOOLS/node/package.json" ] || echo '{"private": true}' > "$TOOLS/node/package.json"
  (cd "$TOOLS/node" && npm install --silent --no-audit --no-fund "playwright-core@$PLAYWRIGHT_CORE" >/dev/null)
fi
if ! "$TOOLS/venv/bin/schemathesis" --version 2>/dev/null | grep -q "$SCHEMATHESIS"; then
  echo "setup-serve-tests: pip install schemathesis==$SCHEMATHESIS" >&2
  python3 -m venv "$TOOLS/venv"
  "$TOOLS/venv/bin/pip" install -q --disable-pip-version-check "schemathesis==$SCHEMATHESIS"
fi
