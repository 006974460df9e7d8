#!/usr/bin/env bash
# Build dbt's classic example project (../shared/dbt/jaffle_shop_classic) for
# real on the project's PostgreSQL, then import it into a dbModel:
#
#   scripts/dbt.sh [build]   venv + copy + `dbt seed && dbt run && dbt docs generate`
#                            against `scripts/db.sh start postgres` (database
#                            lucy_scratch, schema jaffle_shop), then
#                            `lucy model import --dbt …/target --out …/jaffle_shop.json`
#   scripts/dbt.sh dir       print the scratch directory (project copy, target/, model)
#   scripts/dbt.sh url       print the PostgreSQL URL whose search path is the built schema
#
# dbt-core and dbt-postgres come from PyPI, versions pinned below, in a venv
# under ${LUCY_CACHE:-~/.cache/lucy}/venv-dbt. ../shared is never written to:
# the project is copied to ${LUCY_DB_DIR:-~/.cache/lucy/db}/dbt/jaffle_shop_classic
# and built there (profiles.yml written beside it). Idempotent: the venv is
# reused when it has the pinned versions; the build runs again every time
# (seed, run, test and docs generate take ~35 s). The lucy binary is
# ${LUCY_BIN:-target/debug/lucy}; without one the import is skipped.
# dbt-core 1.12 is not used: its install downloads a parser wheel from
# outside PyPI, which this workplace cannot reach.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
DBT_CORE="1.11.16"
DBT_POSTGRES="1.11.0"
VENV="${LUCY_CACHE:-$HOME/.cache/lucy}/venv-dbt"
work="${LUCY_DB_DIR:-$HOME/.cache/lucy/db}/dbt"
proj="$work/jaffle_shop_classic"
schema="jaffle_shop"
src="$root/../shared/dbt/jaffle_shop_classic"
lucy="${LUCY_BIN:-$root/target/debug/lucy}"

die() { echo "dbt.sh: $*" >&2; exit 2; }
say() { echo "dbt.sh: $*" >&2; }

pg_url() { "$here/db.sh" url postgres scratch; }

venv() {
  if [ -x "$VENV/bin/dbt" ] && "$VENV/bin/python" - <<EOF 2>/dev/null
import sys
from importlib.metadata import version
sys.exit(not (version("dbt-core") == "$DBT_CORE" and version("dbt-postgres") == "$DBT_POSTGRES"))
EOF
  then return 0; fi
  python3 -c 'import venv, ensurepip' 2>/dev/null || {
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-venv >/dev/null
  }
  say "installing dbt-core $DBT_CORE and dbt-postgres $DBT_POSTGRES into $VENV"
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "dbt-core==$DBT_CORE" "dbt-postgres==$DBT_POSTGRES"
}

build() {
  [ -d "$src" ] || die "no dbt project at $src"
  "$here/db.sh" start postgres
  venv
  rm -rf "$proj"
  mkdir -p "$work"
  cp -r "$src" "$proj"
  chmod -R u+w "$proj"
  # The scratch database of scripts/db.sh, owned by the role `lucy`.
  cat > "$proj/profiles.yml" <<EOF
jaffle_shop:
  target: dev
  outputs:
    dev:
      type: postgres
      host: 127.0.0.1
      port: ${LUCY_PG_PORT:-54329}
      user: lucy
      password: lucy
      dbname: lucy_scratch
      schema: $schema
      threads: 2
EOF
  cd "$proj"
  export DBT_PROFILES_DIR="$proj" DBT_SEND_ANONYMOUS_USAGE_STATS=False DO_NOT_TRACK=1
  local started; started=$(date +%s)
  "$VENV/bin/dbt" --quiet seed
  "$VENV/bin/dbt" --quiet run
  "$VENV/bin/dbt" --quiet test
  "$VENV/bin/dbt" --quiet docs generate
  say "built $proj/target with dbt-core $DBT_CORE in $(( $(date +%s) - started )) s"
  if [ -x "$lucy" ]; then
    "$lucy" model import --dbt "$proj/target" --out "$work/jaffle_shop.json"
  else
    say "no lucy binary at $lucy yet (cargo build, or set LUCY_BIN): import skipped; tests/dbt_postgres.rs imports it"
  fi
}

case "${1:-build}" in
  build) build ;;
  dir) echo "$work" ;;
  url) echo "$(pg_url)?schema=$schema" ;;
  *) die "usage: scripts/dbt.sh [build|dir|url]" ;;
esac
