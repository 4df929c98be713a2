#!/usr/bin/env bash
# A throwaway PostgreSQL server for the tests: its own data directory, loopback only, trust
# authentication for one superuser (spmvd_test), fsync off. Used by run-tests.sh and by the
# integration test that stops and restarts a server under two daemons.
#
#   deploy/test-postgres.sh start DIR [PORT]   initdb DIR/data unless it exists, start the server
#                                              on 127.0.0.1:PORT (a free port when omitted) and
#                                              print its URL
#   deploy/test-postgres.sh stop DIR           stop it (fast shutdown); a no-op when not running
#
# PostgreSQL refuses to run as root: as root the server runs as the `postgres` system user
# (created by Debian's postgresql package), which is given DIR.
set -euo pipefail
bindir=${SPMVD_POSTGRES_BINDIR:-/usr/lib/postgresql/15/bin}
command=${1:?usage: test-postgres.sh start|stop DIR [PORT]}
dir=${2:?usage: test-postgres.sh start|stop DIR [PORT]}

# From /, since the caller's directory (a checkout under /root, say) may be closed to the
# postgres user, and initdb fails when it cannot read its working directory.
as_server_user() {
  if [ "$(id -u)" -eq 0 ]; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi
}

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

case "$command" in
  start)
    if [ ! -x "$bindir/initdb" ]; then
      echo "test-postgres: no $bindir/initdb (apt-get install postgresql)" >&2
      exit 1
    fi
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)  # absolute: the server runs from /
    if [ "$(id -u)" -eq 0 ]; then chown postgres: "$dir"; fi
    if [ ! -f "$dir/data/PG_VERSION" ]; then
      as_server_user "$bindir/initdb" -D "$dir/data" -U spmvd_test --auth=trust -E UTF8 \
        --no-locale >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
    fi
    # A port that nothing answers on now; another process may take it before the server
    # binds, so a failed start tries another (unless the caller fixed the port).
    for attempt in 1 2 3 4 5; do
      port=${3:-$((20000 + RANDOM % 40000))}
      if [ -z "${3:-}" ] && port_in_use "$port"; then continue; fi
      if as_server_user "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 \
        -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off" start >/dev/null; then
        echo "$port" >"$dir/port"
        echo "postgresql://spmvd_test@127.0.0.1:$port/postgres"
        exit 0
      fi
      if [ -n "${3:-}" ]; then break; fi
    done
    echo "test-postgres: the server did not start; $dir/server.log says:" >&2
    tail -n 20 "$dir/server.log" >&2 || true
    exit 1
    ;;
  stop)
    if [ -d "$dir" ]; then dir=$(cd "$dir" && pwd); fi
    if [ -f "$dir/data/postmaster.pid" ]; then
      as_server_user "$bindir/pg_ctl" -D "$dir/data" -m fast -w -t 30 stop >/dev/null
    fi
    ;;
  *)
    echo "usage: test-postgres.sh start|stop DIR [PORT]" >&2
    exit 2
    ;;
esac
