#!/usr/bin/env bash
# Private PostgreSQL and MariaDB (MySQL) servers owned by the project, for
# `--execute`, `lucy bench --database` and `lucy model import --postgres/--mysql`,
# and a local Spark Connect server (named only explicitly: `spark`).
#
#   scripts/db.sh start  [postgres|mysql|spark]  install (Debian; Spark: pyspark from PyPI) when missing,
#                                            init, start, wait until ready
#   scripts/db.sh stop   [postgres|mysql|spark]
#   scripts/db.sh status [postgres|mysql|spark]  exit 0 when every named server answers
#   scripts/db.sh url    postgres|mysql|spark [SUITE [DB_ID]] [--reader]
#                                            the connection URL (of the server, or of a loaded suite's database;
#                                            SUITE `scratch`: the lucy_scratch database tests may fill and empty)
#   scripts/db.sh load   SUITE [postgres|mysql|spark]
#                                            load the suite's SQLite database(s) (ddo, acme, spider-dev);
#                                            skipped when already loaded from the same file (LUCY_DB_RELOAD=1 forces)
#   scripts/db.sh check  SUITE [postgres|mysql|spark]
#                                            load, then compare every gold query's rows with SQLite's and run every
#                                            oracle view (lucy bench SUITE --oracle tables --database URL; the
#                                            differences and their causes: benchmarks/results/engines.md)
#
# Data lives under ${LUCY_DB_DIR:-~/.cache/lucy/db}; both servers listen on
# 127.0.0.1 only, PostgreSQL on port ${LUCY_PG_PORT:-54329}, MariaDB on
# ${LUCY_MYSQL_PORT:-33069}. Every command is idempotent and quiet when
# there is nothing to do. Two login roles exist on each server:
#   lucy         owns the loaded databases (can write: lucy's own read-only
#                transaction is what keeps it from writing, and the tests prove it)
#   lucy_reader  SELECT only: the role docs/phases.md recommends giving lucy
# Their passwords equal their names: these are local test instances, bound to
# loopback, never a team's server.
#
# Spark (never started unless named): Spark 4.3 from PyPI's pyspark
# (scripts/spark-requirements.txt, pinned with hashes, in
# ${LUCY_CACHE:-~/.cache/lucy}/venv-spark) on Debian's OpenJDK 17; one local
# driver (local[2], heap ${LUCY_SPARK_MEMORY:-1g}) with the Spark Connect
# server on 127.0.0.1:${LUCY_SPARK_PORT:-15029}, run by scripts/spark_server.py.
# Clients send the bearer token `lucy` (export LUCY_SPARK_TOKEN=lucy). Tables
# are Parquet under $LUCY_DB_DIR/spark/warehouse, registered again at every start.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
base="${LUCY_DB_DIR:-$HOME/.cache/lucy/db}"
pg_port="${LUCY_PG_PORT:-54329}"
my_port="${LUCY_MYSQL_PORT:-33069}"
sp_port="${LUCY_SPARK_PORT:-15029}"
pg_bin=""

die() { echo "db.sh: $*" >&2; exit 2; }
say() { echo "db.sh: $*" >&2; }
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

# --- installation -----------------------------------------------------------

apt_install() {
  local SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  say "installing $* (Debian packages)"
  local stamp="/var/lib/apt/periodic/lucy-db-update"
  # One `apt-get update` per machine is enough for these packages.
  if [ ! -e "$stamp" ] || ! apt-cache policy "$@" 2>/dev/null | grep -q Candidate; then
    $SUDO apt-get update -qq -o DPkg::Lock::Timeout=600
    $SUDO mkdir -p "$(dirname "$stamp")" && $SUDO touch "$stamp" || true
  fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    -o DPkg::Lock::Timeout=600 "$@" >/dev/null
}

need_pg() {
  local need=()
  installed postgresql || need+=(postgresql)
  # root runs the server as the `postgres` user, which must reach the data directory
  if [ "$(id -u)" -eq 0 ] && ! command -v setfacl >/dev/null 2>&1; then need+=(acl); fi
  [ ${#need[@]} -eq 0 ] || apt_install "${need[@]}"
  pg_bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)"
  [ -x "$pg_bin/initdb" ] || die "PostgreSQL binaries not found under /usr/lib/postgresql/*/bin"
}

need_my() {
  local need=()
  installed mariadb-server || need+=(mariadb-server)
  installed mariadb-client || need+=(mariadb-client)
  [ ${#need[@]} -eq 0 ] || apt_install "${need[@]}"
}

# --- PostgreSQL -------------------------------------------------------------

pg_dir="$base/postgres"
pg_data="$pg_dir/data"
pg_sock="$pg_dir/run"
pg_log="$pg_dir/server.log"

# Run a command as the server's owner: ourselves, or `postgres` when we are root
# (initdb and postgres refuse to run as root).
as_pg() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# As root, let the `postgres` user traverse (not list) the directories above
# its data directory, with an ACL for that user only.
pg_grant_traverse() {
  [ "$(id -u)" -eq 0 ] || return 0
  local d="$pg_dir"
  while [ "$d" != "/" ]; do
    d="$(dirname "$d")"
    if ! runuser -u postgres -- test -x "$d" 2>/dev/null; then
      setfacl -m u:postgres:x "$d"
    fi
  done
}

pg_psql() { as_pg "$pg_bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$pg_sock" -p "$pg_port" -U postgres "$@"; }

pg_ready() { [ -n "$pg_bin" ] && as_pg "$pg_bin/pg_isready" -q -h "$pg_sock" -p "$pg_port" 2>/dev/null; }

# Login roles and the scratch database; idempotent, run by every start
# (a server started before a new database was added gets it too).
pg_setup() {
  pg_psql -d postgres <<'EOF' >/dev/null
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'lucy') THEN
    CREATE ROLE lucy LOGIN CREATEDB PASSWORD 'lucy';
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'lucy_reader') THEN
    CREATE ROLE lucy_reader LOGIN PASSWORD 'lucy_reader';
  END IF;
END $$;
EOF
  # lucy_scratch: a database the tests may fill and empty (the value index's
  # bounds on a million-row table), never a loaded suite's.
  if ! pg_psql -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'lucy_scratch'" | grep -q 1; then
    pg_psql -d postgres -c "CREATE DATABASE lucy_scratch OWNER lucy" >/dev/null
  fi
}

pg_start() {
  need_pg
  if pg_ready; then pg_setup; return 0; fi
  mkdir -p "$pg_dir"
  if [ "$(id -u)" -eq 0 ]; then chown postgres: "$pg_dir"; pg_grant_traverse; fi
  if [ ! -s "$pg_data/PG_VERSION" ]; then
    say "initialising PostgreSQL in $pg_data"
    as_pg "$pg_bin/initdb" -D "$pg_data" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
      -E UTF8 --locale=C.UTF-8 >"$pg_dir/initdb.log" 2>&1 || { cat "$pg_dir/initdb.log" >&2; die "initdb failed"; }
    as_pg mkdir -p "$pg_sock"
    cat >>"$pg_data/postgresql.conf" <<EOF
# lucy (scripts/db.sh): a private, loopback-only instance
listen_addresses = '127.0.0.1'
port = $pg_port
unix_socket_directories = '$pg_sock'
shared_buffers = 64MB
max_connections = 40
fsync = off
synchronous_commit = off
full_page_writes = off
EOF
  fi
  as_pg mkdir -p "$pg_sock"
  as_pg "$pg_bin/pg_ctl" -D "$pg_data" -l "$pg_log" -w -t 180 start >/dev/null \
    || { tail -n 20 "$pg_log" >&2; die "PostgreSQL did not start (log: $pg_log)"; }
  # (bounds for a machine busy compiling: scripts/test.sh starts the
  # servers beside the build)
  for _ in $(seq 1 240); do pg_ready && break; sleep 0.5; done
  pg_ready || die "PostgreSQL is not ready after 120 s (log: $pg_log)"
  pg_setup
  say "PostgreSQL ready on 127.0.0.1:$pg_port"
}

pg_stop() {
  need_pg
  [ -s "$pg_data/PG_VERSION" ] || return 0
  if pg_ready; then as_pg "$pg_bin/pg_ctl" -D "$pg_data" -m fast -w stop >/dev/null; say "PostgreSQL stopped"; fi
}

# --- MariaDB ----------------------------------------------------------------

my_dir="$base/mysql"
my_data="$my_dir/data"
my_sock="$my_dir/run/mysqld.sock"
my_log="$my_dir/server.log"
my_pid="$my_dir/run/mysqld.pid"
my_user="$(id -un)"

my_client() { mariadb --no-defaults -u root --socket="$my_sock" "$@"; }

my_ready() { [ -S "$my_sock" ] && mariadb-admin --no-defaults -u root --socket="$my_sock" ping >/dev/null 2>&1; }

# Users and the scratch database; idempotent, run by every start.
my_setup() {
  my_client <<'EOF'
CREATE USER IF NOT EXISTS 'lucy'@'127.0.0.1' IDENTIFIED BY 'lucy';
CREATE USER IF NOT EXISTS 'lucy_reader'@'127.0.0.1' IDENTIFIED BY 'lucy_reader';
CREATE DATABASE IF NOT EXISTS lucy_scratch CHARACTER SET utf8mb4;
GRANT ALL ON lucy_scratch.* TO 'lucy'@'127.0.0.1';
EOF
}

my_start() {
  need_my
  if my_ready; then my_setup; return 0; fi
  mkdir -p "$my_dir/run"
  if [ ! -d "$my_data/mysql" ]; then
    say "initialising MariaDB in $my_data"
    mariadb-install-db --no-defaults --user="$my_user" --datadir="$my_data" --auth-root-authentication-method=socket \
      --skip-test-db >"$my_dir/install-db.log" 2>&1 || { cat "$my_dir/install-db.log" >&2; die "mariadb-install-db failed"; }
  fi
  # --user is required when we are root (mariadbd refuses root otherwise).
  nohup mariadbd --no-defaults --user="$my_user" --datadir="$my_data" --socket="$my_sock" --pid-file="$my_pid" \
    --port="$my_port" --bind-address=127.0.0.1 --skip-name-resolve --log-error="$my_log" \
    --innodb-buffer-pool-size=64M --innodb-flush-log-at-trx-commit=0 --innodb-doublewrite=0 \
    --performance-schema=OFF --max-connections=40 --character-set-server=utf8mb4 >/dev/null 2>&1 &
  for _ in $(seq 1 360); do my_ready && break; sleep 0.5; done
  my_ready || { tail -n 20 "$my_log" >&2; die "MariaDB is not ready after 180 s (log: $my_log)"; }
  my_setup
  say "MariaDB ready on 127.0.0.1:$my_port"
}

my_stop() {
  [ -d "$my_data" ] || return 0
  if my_ready; then
    mariadb-admin --no-defaults -u root --socket="$my_sock" shutdown >/dev/null 2>&1 || true
    for _ in $(seq 1 60); do [ -S "$my_sock" ] || break; sleep 0.5; done
    say "MariaDB stopped"
  fi
}

# --- Spark (Spark Connect) --------------------------------------------------

sp_dir="$base/spark"
sp_log="$sp_dir/server.log"
sp_pid="$sp_dir/server.pid"
sp_token="lucy"
sp_python="${LUCY_CACHE:-$HOME/.cache/lucy}/venv-spark/bin/python"

need_spark() {
  local v
  v="$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n1)"
  if [ -z "$v" ] || [ "$v" -lt 17 ]; then apt_install openjdk-17-jre-headless; fi
  "$here/spark-venv.sh"
}

sp_alive() { [ -s "$sp_pid" ] && kill -0 "$(cat "$sp_pid")" 2>/dev/null; }

sp_ready() {
  sp_alive && [ -e "$sp_dir/ready" ] && (exec 3<>"/dev/tcp/127.0.0.1/$sp_port") 2>/dev/null
}

sp_start() {
  if sp_ready; then return 0; fi
  need_spark
  mkdir -p "$sp_dir"
  if sp_alive; then
    say "Spark is starting (pid $(cat "$sp_pid")); waiting"
  else
    rm -f "$sp_dir/ready"
    # Its own session (process group): stop reaches the JVM child too.
    LUCY_SPARK_SERVER_TOKEN="$sp_token" PYSPARK_PYTHON="$sp_python" \
      setsid nohup "$sp_python" "$here/spark_server.py" "$sp_dir" "$sp_port" >"$sp_log" 2>&1 </dev/null &
    echo $! >"$sp_pid"
  fi
  for _ in $(seq 1 720); do sp_ready && break; sp_alive || break; sleep 0.5; done
  sp_ready || { tail -n 20 "$sp_log" >&2; sp_stop; die "Spark is not ready after 360 s (log: $sp_log)"; }
  say "Spark Connect ready on 127.0.0.1:$sp_port"
}

sp_stop() {
  [ -s "$sp_pid" ] || return 0
  local pid
  pid="$(cat "$sp_pid")"
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    # Whatever is left of its process group (the JVM), then the group itself.
    kill -KILL -- "-$pid" 2>/dev/null || true
    say "Spark stopped"
  fi
  # The JVM exits when its Python parent closes the gateway; wait for it.
  for _ in $(seq 1 20); do pgrep -g "$pid" >/dev/null 2>&1 || break; sleep 0.5; done
  pkill -KILL -g "$pid" 2>/dev/null || true
  rm -f "$sp_pid" "$sp_dir/ready"
}

# Load one SQLite file into the running Spark server as database $1.
sp_load() {
  local name="$1" path="$2" r="$sp_dir/requests/$1"
  mkdir -p "$sp_dir/requests"
  rm -f "$r.done" "$r.err"
  printf '{"name": "%s", "sqlite": "%s"}\n' "$name" "$(cd "$(dirname "$path")" && pwd)/$(basename "$path")" >"$r.tmp"
  mv "$r.tmp" "$r.req"
  for _ in $(seq 1 1200); do
    [ -e "$r.done" ] || [ -e "$r.err" ] || ! sp_alive || { sleep 0.5; continue; }
    break
  done
  if [ -e "$r.done" ]; then
    sed -n 's/^lucy-load: //p' "$r.done" | sed "s/^/db.sh: spark $name: /" >&2
    rm -f "$r.done"
    return 0
  fi
  [ -e "$r.err" ] && cat "$r.err" >&2
  die "loading $path into Spark database $name failed (log: $sp_log)"
}

# --- suites -----------------------------------------------------------------

# The SQLite database(s) of a suite, one "db_name<TAB>path" per line; db_name
# is the server-side database name (spider-dev: spider_<db_id>).
suite_dbs() {
  case "$1" in
    ddo) printf 'ddo\t%s\n' "$root/dbmodels/ddo.sqlite" ;;
    acme) printf 'acme\t%s\n' "$root/../shared/benchmarks/acme/acme_small.sqlite" ;;
    spider-dev|spider)
      local f
      for f in "$root"/../shared/benchmarks/spider/spiderman_dev_sqlite/*.sqlite; do
        [ -e "$f" ] || die "no Spider dev databases under ../shared/benchmarks/spider/spiderman_dev_sqlite"
        printf 'spider_%s\t%s\n' "$(basename "$f" .sqlite)" "$f"
      done ;;
    *) die "unknown suite '$1' (ddo, acme, spider-dev)" ;;
  esac
}

db_name() {
  case "$1" in
    ddo|acme) echo "$1" ;;
    scratch) echo "lucy_scratch" ;;
    spider-dev|spider) [ -n "${2:-}" ] && echo "spider_$2" || echo "spider_{db_id}" ;;
    *) die "unknown suite '$1' (ddo, acme, spider-dev)" ;;
  esac
}

url() {
  local engine="$1"; shift
  local suite="" dbid="" role="lucy"
  for a in "$@"; do
    case "$a" in
      --reader) role="lucy_reader" ;;
      *) if [ -z "$suite" ]; then suite="$a"; else dbid="$a"; fi ;;
    esac
  done
  local db=""
  [ -z "$suite" ] || db="$(db_name "$suite" "$dbid")"
  case "$engine" in
    postgres|postgresql|pg) echo "postgresql://$role:$role@127.0.0.1:$pg_port/${db:-postgres}" ;;
    mysql|mariadb) echo "mysql://$role:$role@127.0.0.1:$my_port/$db" ;;
    spark) echo "sc://127.0.0.1:$sp_port${db:+/$db}" ;;
    *) die "unknown engine '$engine' (postgres, mysql, spark)" ;;
  esac
}

load() {
  local suite="$1" engines="${2:-postgres mysql}"
  command -v python3 >/dev/null 2>&1 || die "python3 is needed to read the SQLite files"
  local name path e
  for e in $engines; do
    case "$e" in
      postgres) pg_start ;;
      mysql) my_start ;;
      spark) sp_start ;;
      *) die "unknown engine '$e'" ;;
    esac
  done
  while IFS=$'\t' read -r name path; do
    [ -f "$path" ] || die "$path: no such SQLite file"
    # Skip a database already loaded from the same file by the same loader.
    local stamp
    stamp="$(cat "$path" "$here/db_load.py" | sha256sum | cut -c1-16)"
    for e in $engines; do
      local dir="$pg_dir"
      [ "$e" = postgres ] || dir="$my_dir"
      [ "$e" != spark ] || { dir="$sp_dir"; stamp="$(cat "$path" "$here/db_load.py" "$here/spark_server.py" | sha256sum | cut -c1-16)"; }
      if [ "${LUCY_DB_RELOAD:-0}" != 1 ] && [ "$(cat "$dir/loaded-$name" 2>/dev/null)" = "$stamp" ] && loaded "$e" "$name"; then
        continue
      fi
      case "$e" in
        postgres)
          python3 "$here/db_load.py" postgres "$path" "$name" 2> >(sed "s/^lucy-load: /db.sh: postgres $name: /" >&2) >"$pg_dir/load-$name.sql"
          PGOPTIONS='--client-min-messages=warning' pg_psql -d postgres -c "DROP DATABASE IF EXISTS \"$name\" WITH (FORCE)" -c "CREATE DATABASE \"$name\" OWNER lucy" >/dev/null
          PGOPTIONS='--client-min-messages=warning' as_pg "$pg_bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$pg_sock" -p "$pg_port" \
            -U lucy -d "$name" -f - <"$pg_dir/load-$name.sql" 2>"$pg_dir/load-$name.err" >/dev/null \
            || { cat "$pg_dir/load-$name.err" >&2; die "loading $path into PostgreSQL database $name failed"; }
          sed -n 's/.*lucy-load: //p' "$pg_dir/load-$name.err" | sed "s/^/db.sh: postgres $name: /" >&2
          pg_psql -d "$name" -c "GRANT USAGE ON SCHEMA public TO lucy_reader; GRANT SELECT ON ALL TABLES IN SCHEMA public TO lucy_reader" >/dev/null
          ;;
        mysql)
          python3 "$here/db_load.py" mysql "$path" "$name" 2> >(sed "s/^lucy-load: /db.sh: mysql $name: /" >&2) >"$my_dir/load-$name.sql"
          my_client -e "DROP DATABASE IF EXISTS \`$name\`; CREATE DATABASE \`$name\` CHARACTER SET utf8mb4;
            GRANT ALL ON \`$name\`.* TO 'lucy'@'127.0.0.1'; GRANT SELECT ON \`$name\`.* TO 'lucy_reader'@'127.0.0.1'"
          my_client --force -N -D "$name" <"$my_dir/load-$name.sql" 2>"$my_dir/load-$name.err" >"$my_dir/load-$name.out" || true
          sed -n 's/^lucy-load: //p' "$my_dir/load-$name.out" | sed "s/^/db.sh: mysql $name: /" >&2
          python3 "$here/db_load.py" mysql-errors "$my_dir/load-$name.sql" "$my_dir/load-$name.err" \
            | sed "s/^/db.sh: mysql $name: /" >&2
          ;;
        spark) sp_load "$name" "$path" ;;
      esac
      echo "$stamp" >"$dir/loaded-$name"
    done
  done < <(suite_dbs "$suite")
  say "loaded $suite into: $engines"
}

# Whether database $2 exists on engine $1.
loaded() {
  if [ "$1" = spark ]; then
    [ -s "$sp_dir/warehouse/$2/tables.json" ]
  elif [ "$1" = postgres ]; then
    [ "$(pg_psql -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$2'" 2>/dev/null)" = 1 ]
  else
    [ -n "$(my_client -N -e "SHOW DATABASES LIKE '$2'" 2>/dev/null)" ]
  fi
}

engines_of() {
  case "${1:-}" in
    "") echo "postgres mysql" ;;
    postgres|postgresql|pg) echo postgres ;;
    mysql|mariadb) echo mysql ;;
    spark) echo spark ;;
    *) die "unknown engine '$1' (postgres, mysql, spark)" ;;
  esac
}

# Run $2 (start or stop) on engine $1.
on() {
  case "$1" in
    postgres) "pg_$2" ;;
    mysql) "my_$2" ;;
    spark) "sp_$2" ;;
  esac
}

cmd="${1:-}"
[ -n "$cmd" ] || { sed -n '2,34p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
shift
case "$cmd" in
  start) engines="$(engines_of "${1:-}")" || exit 2; for e in $engines; do on "$e" start; done ;;
  stop) engines="$(engines_of "${1:-}")" || exit 2; for e in $engines; do on "$e" stop; done ;;
  status)
    rc=0
    engines="$(engines_of "${1:-}")" || exit 2
    for e in $engines; do
      if [ "$e" = spark ]; then
        if sp_ready; then echo "spark: up on 127.0.0.1:$sp_port"; else echo "spark: down"; rc=1; fi
      elif [ "$e" = postgres ]; then
        pg_bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)"
        if pg_ready; then echo "postgres: up on 127.0.0.1:$pg_port"; else echo "postgres: down"; rc=1; fi
      else
        if command -v mariadb-admin >/dev/null && my_ready; then echo "mysql: up on 127.0.0.1:$my_port"; else echo "mysql: down"; rc=1; fi
      fi
    done
    exit $rc ;;
  url) [ $# -ge 1 ] || die "usage: db.sh url postgres|mysql|spark [SUITE [DB_ID]] [--reader]"; url "$@" ;;
  load)
    [ $# -ge 1 ] || die "usage: db.sh load SUITE [postgres|mysql|spark]"
    engines="$(engines_of "${2:-}")" || exit 2
    load "$1" "$engines" ;;
  check)
    [ $# -ge 1 ] || die "usage: db.sh check SUITE [postgres|mysql|spark]"
    export LUCY_SPARK_TOKEN="${LUCY_SPARK_TOKEN:-$sp_token}"
    engines="$(engines_of "${2:-}")" || exit 2
    load "$1" "$engines"
    lucy="${LUCY_BIN:-$root/target/debug/lucy}"
    [ -x "$lucy" ] || (cd "$root" && cargo build --quiet)
    for e in $engines; do
      out="$(mktemp -d)"
      "$lucy" bench "$1" --oracle tables --database "$(url "$e" "$1")" --no-progress --out "$out" >/dev/null 2> >(grep -v "^wrote " >&2)
      sed -n '/^## Gold SQL on/,$p' "$out/report.md"
      python3 -c "import json,sys; q=json.load(open(sys.argv[1]))['questions']; v=[x['metrics'].get('view_runs') for x in q]; print(f'views: {v.count(True)} run, {v.count(False)} fail')" "$out/results.json"
      rm -rf "$out"
    done ;;
  *) die "unknown command '$cmd' (start, stop, status, url, load, check)" ;;
esac
