#!/usr/bin/env bash
# A throwaway PostgreSQL cluster on 127.0.0.1 for the PostgresStore tests.
#
#   eval "$(scripts/postgres.sh start)"   # prints `export TOOLNEXUS_PG_URL=... TOOLNEXUS_PG_DIR=...`
#   scripts/postgres.sh stop              # stops the cluster in $TOOLNEXUS_PG_DIR and deletes it
#
# Installs PostgreSQL from the distribution's packages (apt-get) when initdb/pg_ctl are absent.
# As root, the cluster runs as a dedicated non-root user (PostgreSQL refuses to run as root).
# Everything but the `export` line goes to stderr.
set -euo pipefail

PG_USER="toolnexus-pg"

log() { echo "postgres.sh: $*" >&2; }

find_bin() {
  if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
    dirname "$(readlink -f "$(command -v pg_ctl)")"
    return
  fi
  local dir
  dir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
  if [ -n "$dir" ] && [ -x "$dir/pg_ctl" ]; then
    echo "$dir"
  fi
}

install_postgres() {
  log "initdb/pg_ctl not found: installing PostgreSQL from the distribution's packages"
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    sudo="sudo"
  fi
  $sudo apt-get update >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends postgresql >&2
}

free_port() {
  local port
  for port in $(seq 54320 54999); do
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return
    fi
  done
  log "no free port in 54320-54999"
  exit 1
}

# runs a command as the cluster's owner
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u "$PG_USER" -- "$@"
  else
    "$@"
  fi
}

start() {
  local bin
  bin="$(find_bin)"
  if [ -z "$bin" ]; then
    install_postgres
    bin="$(find_bin)"
  fi
  if [ -z "$bin" ]; then
    log "PostgreSQL is still not installed"
    exit 1
  fi
  local dir port
  dir="$(mktemp -d /tmp/toolnexus-pg.XXXXXX)"
  chmod 755 "$dir"
  port="$(free_port)"
  if [ "$(id -u)" -eq 0 ]; then
    if ! id "$PG_USER" >/dev/null 2>&1; then
      useradd --system --no-create-home --shell /usr/sbin/nologin "$PG_USER"
    fi
    chown "$PG_USER" "$dir"
  fi
  as_owner "$bin/initdb" -D "$dir/data" -U toolnexus --auth=trust -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 || {
    cat "$dir/initdb.log" >&2
    exit 1
  }
  as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c synchronous_commit=off -c max_connections=200" \
    start >&2 || {
    cat "$dir/server.log" >&2
    exit 1
  }
  echo "$bin" >"$dir/bin"
  log "PostgreSQL $("$bin/pg_ctl" --version | awk '{print $3}') on 127.0.0.1:$port (data in $dir)"
  echo "export TOOLNEXUS_PG_URL=postgres://toolnexus@127.0.0.1:$port/postgres TOOLNEXUS_PG_DIR=$dir"
}

stop() {
  local dir="${TOOLNEXUS_PG_DIR:-}"
  if [ -z "$dir" ] || [ ! -d "$dir/data" ]; then
    log "no cluster to stop (TOOLNEXUS_PG_DIR unset or gone)"
    return
  fi
  as_owner "$(cat "$dir/bin")/pg_ctl" -D "$dir/data" -m fast -w stop >&2 || true
  rm -rf "$dir"
  log "stopped and removed $dir"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *)
    echo "usage: $0 start|stop" >&2
    exit 2
    ;;
esac
