#!/usr/bin/env bash
# Install what the build needs from Debian: cmake (highs-sys builds HiGHS
# from source) and libclang-dev (bindgen). Idempotent; quiet when present.
set -euo pipefail
# Ask dpkg about the packages themselves: a leftover runtime libclang.so.1
# without clang's headers would pass a file check and then fail in bindgen.
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
need=()
installed cmake || need+=(cmake)
installed libclang-dev || need+=(libclang-dev)
command -v cc >/dev/null 2>&1 || need+=(build-essential)
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]}" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
"$(dirname "$0")/fetch-minilm.sh"  # offline embedding model for CRUSH (lucy crush); quiet when present
