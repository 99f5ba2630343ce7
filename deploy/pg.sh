#!/usr/bin/env bash
# A private PostgreSQL 15 for fleetmark: its own data directory, its own free port,
# run as an unprivileged user (initdb/postgres refuse root). The port is kept in
# DIR/port: a restart reuses it while it is free (so clients' URIs stay valid) and picks
# a new free one only when another program has taken it (then the URI changes).
#
#   deploy/pg.sh start DIR   # initdb if needed, start, print the connection URI
#   deploy/pg.sh uri DIR     # print the URI of a running instance (exit 1 if stopped)
#   deploy/pg.sh stop DIR
#   deploy/pg.sh replica DIR REPLICA_DIR
#                            # a streaming replica of the running instance in DIR
#                            # (pg_basebackup -R on first use), started on its own
#                            # free port; prints its URI. `uri`/`stop REPLICA_DIR` as
#                            # for any instance; `start REPLICA_DIR` restarts it.
#
# DIR must be writable by the chosen user (created and chowned when run as root).
# The database "fleetmark" is created on first start. Listens on 127.0.0.1 only.
set -euo pipefail
cmd=${1:-}; dir=${2:-}
usage="usage: $0 start|uri|stop DIR, or $0 replica PRIMARY_DIR REPLICA_DIR"
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "$usage" >&2; exit 2; }
bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)
[ -x "$bindir/initdb" ] || { echo "pg.sh: PostgreSQL server not installed (deploy/install-deps.sh run)" >&2; exit 1; }
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
data="$dir/data"

as_user=()
pguser=$(id -un)
own_dir() {  # own_dir DIR: the server's user may write DIR and traverse its parents
  [ "$(id -u)" -eq 0 ] || return 0
  chown "$pguser" "$1"
  local p="$1"; while [ "$p" != / ]; do chmod o+x "$p" 2>/dev/null || true; p=$(dirname "$p"); done
}
if [ "$(id -u)" -eq 0 ]; then
  pguser=postgres
  id postgres >/dev/null 2>&1 || useradd --system --home-dir /var/lib/postgresql postgres
  as_user=(runuser -u "$pguser" --)
fi
own_dir "$dir"

free_port() {
  /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# True if nothing listens on (or holds without SO_REUSEADDR) 127.0.0.1:$1. SO_REUSEADDR
# as PostgreSQL binds, so connections in TIME_WAIT from the last run do not count.
port_free() {
  /usr/bin/python3 -c 'import socket,sys
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen()' "$1" 2>/dev/null
}
pg_start() {  # pg_start PORT
  "${as_user[@]}" "$bindir/pg_ctl" -D "$data" -l "$dir/server.log" -w -t 60 \
    -o "-p $1 -k $dir -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=on" start >/dev/null
}

uri() { echo "postgresql://$pguser@127.0.0.1:$(cat "$dir/port")/fleetmark"; }

# Starts the stopped instance of $dir/data on the port kept in $dir/port, or a new
# free one.
run_instance() {
  port=$(cat "$dir/port" 2>/dev/null || true)
  if ! [[ "$port" =~ ^[0-9]+$ ]] || ! port_free "$port"; then
    [ -z "$port" ] || echo "pg.sh: port $port (from $dir/port) is in use; starting on a new port" >&2
    port=$(free_port)
    echo "$port" > "$dir/port"
  fi
  log_start=$(stat -c %s "$dir/server.log" 2>/dev/null || echo 0)
  if ! pg_start "$port"; then
    # Taken between the check and the start? Once more on a fresh port.
    tail -c +"$((log_start + 1))" "$dir/server.log" 2>/dev/null | grep -q "could not bind" \
      || { tail -20 "$dir/server.log" >&2; exit 1; }
    echo "pg.sh: port $port was taken while starting; starting on a new port" >&2
    port=$(free_port)
    echo "$port" > "$dir/port"
    pg_start "$port" || { tail -20 "$dir/server.log" >&2; exit 1; }
  fi
}

case "$cmd" in
  start)
    if [ ! -f "$data/PG_VERSION" ]; then
      "${as_user[@]}" "$bindir/initdb" -D "$data" -U "$pguser" --auth=trust -E UTF8 >"$dir/initdb.log" 2>&1 \
        || { cat "$dir/initdb.log" >&2; exit 1; }
    fi
    if "${as_user[@]}" "$bindir/pg_ctl" -D "$data" status >/dev/null 2>&1; then
      uri; exit 0
    fi
    run_instance
    port=$(cat "$dir/port")
    if ! "${as_user[@]}" "$bindir/psql" -h 127.0.0.1 -p "$port" -U "$pguser" -d postgres -tAc \
        "SELECT 1 FROM pg_database WHERE datname='fleetmark'" | grep -q 1; then
      "${as_user[@]}" "$bindir/createdb" -h 127.0.0.1 -p "$port" -U "$pguser" fleetmark
    fi
    uri ;;
  uri)
    # Only a running instance has an address (exit 1 and a message otherwise).
    if [ -f "$data/PG_VERSION" ] && [ -f "$dir/port" ] && \
        "${as_user[@]}" "$bindir/pg_ctl" -D "$data" status >/dev/null 2>&1; then
      uri
    else
      echo "pg.sh: PostgreSQL in $dir is not running" >&2; exit 1
    fi ;;
  stop)
    [ -f "$data/PG_VERSION" ] || exit 0
    "${as_user[@]}" "$bindir/pg_ctl" -D "$data" -m fast -w stop >/dev/null 2>&1 || true ;;
  replica)
    replica_dir=${3:-}
    [ -n "$replica_dir" ] || { echo "$usage" >&2; exit 2; }
    "${as_user[@]}" "$bindir/pg_ctl" -D "$data" status >/dev/null 2>&1 \
      || { echo "pg.sh: the primary in $dir is not running (deploy/pg.sh start $dir)" >&2; exit 1; }
    primary_port=$(cat "$dir/port")
    mkdir -p "$replica_dir"
    dir=$(cd "$replica_dir" && pwd)
    data="$dir/data"
    own_dir "$dir"
    if [ ! -f "$data/PG_VERSION" ]; then
      # -R writes standby.signal and primary_conninfo; -X stream copies the WAL the
      # backup needs. initdb's default pg_hba trusts replication from 127.0.0.1.
      "${as_user[@]}" "$bindir/pg_basebackup" -h 127.0.0.1 -p "$primary_port" -U "$pguser" -D "$data" \
        -R -X stream -c fast >"$dir/basebackup.log" 2>&1 || { cat "$dir/basebackup.log" >&2; exit 1; }
      rm -f "$dir/port"  # never the primary's
    fi
    if ! "${as_user[@]}" "$bindir/pg_ctl" -D "$data" status >/dev/null 2>&1; then run_instance; fi
    uri ;;
  *) echo "$usage" >&2; exit 2 ;;
esac
