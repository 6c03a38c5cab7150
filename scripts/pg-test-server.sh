#!/usr/bin/env bash
# A throwaway PostgreSQL server on loopback for tests and benchmarks:
#   scripts/pg-test-server.sh start DIR   initdb into DIR (if new), start on a
#                                         free port, print the server's URL
#   scripts/pg-test-server.sh stop DIR    stop it (DIR stays; remove it after)
#   scripts/pg-test-server.sh restart DIR stop and start on the same port
# It runs as the `postgres` user (PostgreSQL refuses root) from Debian's
# `postgresql` package; tests find it through INTPATH_TEST_PG=<url>.
set -euo pipefail
cmd="${1:?usage: $0 start|stop|restart DIR}"
dir="${2:?usage: $0 start|stop|restart DIR}"
bin="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)"
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start() {
  mkdir -p "$dir"
  [ "$(id -u)" = 0 ] && chown postgres: "$dir"
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    as_pg "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 >"$dir/initdb.log"
    free_port >"$dir/port"
    # Sized for a telemetry burst: room for a batch's pages, WAL rarely
    # checkpointed mid-benchmark. Durability stays on (fsync, synchronous_commit).
    cat >>"$dir/data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $(cat "$dir/port")
unix_socket_directories = '$dir'
shared_buffers = 1GB
max_wal_size = 8GB
max_connections = 200
CONF
  fi
  as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w start >/dev/null
  echo "postgres://postgres@127.0.0.1:$(cat "$dir/port")/postgres"
}

stop() { as_pg "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null; }

case "$cmd" in
  start) start ;;
  stop) stop ;;
  restart) stop; start ;;
  *) echo "usage: $0 start|stop|restart DIR" >&2; exit 2 ;;
esac
