#!/usr/bin/env bash
# The whole fleetmark stack on one machine, for the quickstart and for trying things:
# a private PostgreSQL (deploy/pg.sh: its own data directory and port, run as an
# unprivileged user), the coordinator (gRPC on loopback + the web view) and one local
# agent. State lives in DIR (default .fleetmark): data, tokens, ports, logs, pid files.
# The coordinator is started with --nightly_plan=plans/nightly.txtpb: the database gets
# a schedule "nightly" (02:00 UTC) once; `fleetmark schedules delete nightly` removes it
# for good (the database remembers it was seeded, so no later `up` re-creates it).
# Re-running `up` reuses everything that already exists and is running.
#
#   deploy/stack.sh up [DIR]       # start what is not running; print the addresses
#   deploy/stack.sh down [DIR]     # stop agent, coordinator and PostgreSQL (data kept)
#   deploy/stack.sh status [DIR]
#   deploy/stack.sh env [DIR]      # print "export FLEETMARK_..." lines for `eval`
#
# Binaries come from $FLEETMARK_BUILD (default build/release). Extra agents:
#   build/release/agent/fleetmark-agent --coordinator 127.0.0.1:$(cat DIR/coordinator.port) \
#     --token_file DIR/enrollment_token --name other --spool_dir DIR/agent-other
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
cmd=${1:-}; dir=${2:-.fleetmark}
[ -n "$cmd" ] || { echo "usage: $0 up|down|status|env [DIR]" >&2; exit 2; }
build=${FLEETMARK_BUILD:-$root/build/release}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

free_port() {
  /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
# A value kept in DIR/NAME, created once by the command in $2...
keep() {
  local file="$dir/$1"; shift
  [ -s "$file" ] || { "$@" > "$file.tmp"; mv "$file.tmp" "$file"; }
  cat "$file"
}
secret() { od -An -N32 -tx1 /dev/urandom | tr -d ' \n'; echo; }
running() { [ -f "$dir/$1.pid" ] && kill -0 "$(cat "$dir/$1.pid")" 2>/dev/null; }
stop() {
  if running "$1"; then
    kill "$(cat "$dir/$1.pid")" 2>/dev/null || true
    for _ in $(seq 50); do running "$1" || break; sleep 0.1; done
  fi
  rm -f "$dir/$1.pid"
}

case "$cmd" in
  up)
    for bin in coordinator/fleetmark-coordinator agent/fleetmark-agent coordinator/cli/fleetmark; do
      [ -x "$build/$bin" ] || { echo "stack.sh: $build/$bin missing: build first (see README)" >&2; exit 1; }
    done
    umask 077
    keep admin_token secret >/dev/null
    keep enrollment_token secret >/dev/null
    umask 022
    grpc_port=$(keep coordinator.port free_port)
    http_port=$(keep http.port free_port)
    uri=$(deploy/pg.sh start "$dir/pg")
    if ! running coordinator; then
      "$build/coordinator/fleetmark-coordinator" \
        --database_uri="$uri" --listen_address="127.0.0.1:$grpc_port" --http_address="127.0.0.1:$http_port" \
        --admin_token_file="$dir/admin_token" --enrollment_token_file="$dir/enrollment_token" \
        --nightly_plan="$root/plans/nightly.txtpb" >>"$dir/coordinator.log" 2>&1 &
      echo $! > "$dir/coordinator.pid"
    fi
    if ! running agent; then
      "$build/agent/fleetmark-agent" --coordinator="127.0.0.1:$grpc_port" \
        --token_file="$dir/enrollment_token" --name="${FLEETMARK_AGENT_NAME:-$(hostname -s)}" \
        --labels="${FLEETMARK_AGENT_LABELS:-site=local}" --spool_dir="$dir/agent" >>"$dir/agent.log" 2>&1 &
      echo $! > "$dir/agent.pid"
    fi
    cli=("$build/coordinator/cli/fleetmark" --coordinator="127.0.0.1:$grpc_port" --admin_token_file="$dir/admin_token")
    for i in $(seq 120); do
      if "${cli[@]}" agents list 2>/dev/null | grep -q " online "; then break; fi
      running coordinator || { echo "stack.sh: coordinator exited; see $dir/coordinator.log:" >&2; tail -5 "$dir/coordinator.log" >&2; exit 1; }
      running agent || { echo "stack.sh: agent exited; see $dir/agent.log:" >&2; tail -5 "$dir/agent.log" >&2; exit 1; }
      [ "$i" -lt 120 ] || { echo "stack.sh: no agent online after 60 s (logs in $dir)" >&2; exit 1; }
      sleep 0.5
    done
    echo "PostgreSQL   $uri" >&2
    echo "coordinator  127.0.0.1:$grpc_port (admin token in $dir/admin_token)" >&2
    echo "web view     http://127.0.0.1:$http_port/" >&2
    echo "agent        ${FLEETMARK_AGENT_NAME:-$(hostname -s)} (spool $dir/agent)" >&2 ;;
  down)
    stop agent
    stop coordinator
    deploy/pg.sh stop "$dir/pg" ;;
  status)
    for p in coordinator agent; do
      if running $p; then echo "$p: running (pid $(cat "$dir/$p.pid"))"; else echo "$p: stopped"; fi
    done
    if pg_uri=$(deploy/pg.sh uri "$dir/pg" 2>/dev/null); then
      echo "postgresql: running ($pg_uri)"
    else
      echo "postgresql: stopped"
    fi ;;
  env)
    echo "export FLEETMARK_COORDINATOR=127.0.0.1:$(cat "$dir/coordinator.port")"
    echo "export FLEETMARK_ADMIN_TOKEN_FILE=$dir/admin_token"
    echo "export FLEETMARK_WEB=http://127.0.0.1:$(cat "$dir/http.port")/" ;;
  *) echo "usage: $0 up|down|status|env [DIR]" >&2; exit 2 ;;
esac
