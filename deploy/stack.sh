#!/usr/bin/env bash
# The whole fleetmark stack on one machine, for the quickstart and for trying things:
# a private PostgreSQL (deploy/pg.sh: its own data directory and port, run as an
# unprivileged user), the coordinator (gRPC on loopback + the web view) and one local
# agent. State lives in DIR (default .fleetmark): data, tokens, ports, logs, pid files.
# The coordinator is started with --nightly_plan=plans/nightly.txtpb: the database gets
# a schedule "nightly" (02:00 UTC) once; `fleetmark schedules delete nightly` removes it
# for good (the database remembers it was seeded, so no later `up` re-creates it).
# Re-running `up` reuses everything that already exists and is running; a running
# coordinator whose database URI is no longer PostgreSQL's (PostgreSQL came back on
# another port) is restarted.
#
#   deploy/stack.sh up [DIR]       # start what is not running; print the addresses
#   deploy/stack.sh down [DIR]     # stop agent, coordinator and PostgreSQL (data kept)
#   deploy/stack.sh status [DIR]   # exit 0 if all three run, 3 if any is stopped (or no DIR)
#   deploy/stack.sh env [DIR]      # print "export FLEETMARK_..." lines for `eval`
#
# Exit codes: 0 done; 1 `up` failed (the message says why and what to do); 2 usage;
# 3 `status` found a part stopped, or no stack at DIR (only `up` creates DIR). A pid file counts only while its process is alive
# and runs the expected binary (/proc/PID/cmdline), so a dead or reused pid is "stopped".
#
# Binaries come from $FLEETMARK_BUILD (default build/release). Extra agents:
#   build/release/agent/fleetmark-agent --coordinator 127.0.0.1:$(cat DIR/coordinator.port) \
#     --token_file DIR/enrollment_token --name other --spool_dir DIR/agent-other
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
cmd=${1:-}; dir_arg=${2:-.fleetmark}
usage() { echo "usage: $0 up|down|status|env [DIR]" >&2; exit 2; }
case "$cmd" in -h|--help) sed -n '2,/^# Binaries come from/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;; esac
case "$cmd" in up|down|status|env) ;; *) usage ;; esac
[ "$#" -le 2 ] || usage
# DIR as messages show it: shell-quoted when it holds anything unprintable (an escape
# sequence in the argument is not echoed to the terminal).
shown_dir=$dir_arg
case "$dir_arg" in *[![:print:]]*) shown_dir=$(printf '%q' "$dir_arg") ;; esac
build=${FLEETMARK_BUILD:-$root/build/release}
# shellcheck source=deploy/lib/pid.sh
. "$root/deploy/lib/pid.sh"
# Only `up` creates DIR; the others report on what is there.
if [ ! -d "$dir_arg" ]; then
  case "$cmd" in
    up) mkdir -p "$dir_arg" ;;
    status) echo "no stack at $shown_dir (deploy/stack.sh up $shown_dir starts one)"; exit 3 ;;
    down) echo "no stack at $shown_dir: nothing to stop"; exit 0 ;;
    env) echo "stack.sh: no stack in $dir_arg yet: run deploy/stack.sh up $dir_arg" >&2; exit 1 ;;
  esac
fi
dir=$(cd "$dir_arg" && pwd)

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

binary_of() { echo "fleetmark-$1"; }  # coordinator | agent
# Prints the pid in DIR/NAME.pid if that process is alive and runs our binary
# (pid_runs, deploy/lib/pid.sh: not a zombie, not a reused pid).
live_pid() {
  local file="$dir/$1.pid" pid
  [ -s "$file" ] || return 1
  pid=$(cat "$file")
  pid_runs "$pid" "$(binary_of "$1")" || return 1
  echo "$pid"
}
running() { live_pid "$1" >/dev/null; }
# The value of --FLAG=V in process PID's command line.
proc_flag() {
  local arg
  while IFS= read -r -d '' arg; do
    case "$arg" in --"$2"=*) echo "${arg#--"$2"=}"; return 0 ;; esac
  done 2>/dev/null < "/proc/$1/cmdline"
  return 1
}
# SIGTERM, up to 10 s, then SIGKILL; says what it did.
stop() {
  local pid
  if pid=$(live_pid "$1"); then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 100); do running "$1" || break; sleep 0.1; done
    if running "$1"; then
      kill -9 "$pid" 2>/dev/null || true
      echo "$1: killed (pid $pid; still running 10 s after SIGTERM)"
    else
      echo "$1: stopped (pid $pid)"
    fi
  else
    echo "$1: not running"
  fi
  rm -f "$dir/$1.pid"
}
log_size() { stat -c %s "$1" 2>/dev/null || echo 0; }

start_coordinator() {
  "$build/coordinator/fleetmark-coordinator" \
    --database_uri="$uri" --listen_address="127.0.0.1:$grpc_port" --http_address="127.0.0.1:$http_port" \
    --admin_token_file="$dir/admin_token" --enrollment_token_file="$dir/enrollment_token" \
    --nightly_plan="$root/plans/nightly.txtpb" >>"$dir/coordinator.log" 2>&1 &
  echo $! > "$dir/coordinator.pid"
}
start_agent() {
  "$build/agent/fleetmark-agent" --coordinator="127.0.0.1:$grpc_port" \
    --token_file="$dir/enrollment_token" --name="$agent_name" \
    --labels="${FLEETMARK_AGENT_LABELS:-site=local}" --spool_dir="$dir/agent" >>"$dir/agent.log" 2>&1 &
  echo $! > "$dir/agent.pid"
}

# `up` failed because the agent exited: say why, and the way out for a revoked token.
agent_exited() {
  local output
  output=$(tail -c +"$((agent_log_start + 1))" "$dir/agent.log" 2>/dev/null || true)
  if grep -q "token revoked\|token it was issued under is revoked" <<<"$output"; then
    cat >&2 <<EOF
stack.sh: the agent was refused: the enrollment token in $dir/enrollment_token is revoked
($dir/agent.log). Give the local agent a new token, remove the agent of the revoked
one (its results are kept; the name then enrolls as a new agent), then start it again:
  (umask 077 && $build/coordinator/cli/fleetmark tokens create --description local-agent --coordinator=127.0.0.1:$grpc_port --admin_token_file=$dir/admin_token > $dir/enrollment_token.new) && mv $dir/enrollment_token.new $dir/enrollment_token
  $build/coordinator/cli/fleetmark agents remove $agent_name --coordinator=127.0.0.1:$grpc_port --admin_token_file=$dir/admin_token
  deploy/stack.sh up $dir_arg
EOF
  else
    echo "stack.sh: agent exited; see $dir/agent.log:" >&2
    tail -5 <<<"$output" >&2
  fi
  exit 1
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
    agent_name=${FLEETMARK_AGENT_NAME:-$(hostname -s)}
    uri=$(deploy/pg.sh start "$dir/pg")
    if pid=$(live_pid coordinator); then
      old_uri=$(proc_flag "$pid" database_uri || true)
      if [ "$old_uri" != "$uri" ]; then
        echo "stack.sh: the running coordinator (pid $pid) uses ${old_uri:-an unknown database URI}," \
          "but PostgreSQL is now at $uri: restarting the coordinator" >&2
        stop coordinator >&2
      fi
    fi
    running coordinator || start_coordinator
    agent_log_start=$(log_size "$dir/agent.log")
    running agent || start_agent
    cli=("$build/coordinator/cli/fleetmark" --coordinator="127.0.0.1:$grpc_port" --admin_token_file="$dir/admin_token")
    for i in $(seq 120); do
      if "${cli[@]}" agents list 2>/dev/null | grep -q " online "; then break; fi
      running coordinator || { echo "stack.sh: coordinator exited; see $dir/coordinator.log:" >&2; tail -5 "$dir/coordinator.log" >&2; exit 1; }
      running agent || agent_exited
      if [ "$i" -eq 120 ]; then
        echo "stack.sh: no agent online after 60 s, though the coordinator and the agent are running." >&2
        echo "  coordinator ($dir/coordinator.log):" >&2; tail -3 "$dir/coordinator.log" | sed 's/^/    /' >&2
        echo "  agent ($dir/agent.log):" >&2; tail -3 "$dir/agent.log" | sed 's/^/    /' >&2
        echo "  To start everything afresh (data kept): deploy/stack.sh down $dir_arg && deploy/stack.sh up $dir_arg" >&2
        exit 1
      fi
      sleep 0.5
    done
    echo "PostgreSQL   $uri" >&2
    echo "coordinator  127.0.0.1:$grpc_port (admin token in $dir/admin_token)" >&2
    echo "web view     http://127.0.0.1:$http_port/" >&2
    echo "agent        $agent_name (spool $dir/agent)" >&2 ;;
  down)
    stop agent
    stop coordinator
    if deploy/pg.sh uri "$dir/pg" >/dev/null 2>&1; then
      deploy/pg.sh stop "$dir/pg"
      if deploy/pg.sh uri "$dir/pg" >/dev/null 2>&1; then
        echo "postgresql: still running after pg.sh stop (see $dir/pg/server.log)" >&2; exit 1
      fi
      echo "postgresql: stopped"
    else
      echo "postgresql: not running"
    fi ;;
  status)
    down=0
    pg_uri=$(deploy/pg.sh uri "$dir/pg" 2>/dev/null) || pg_uri=""
    if pid=$(live_pid coordinator); then
      echo "coordinator: running (pid $pid, 127.0.0.1:$(cat "$dir/coordinator.port")," \
        "web view http://127.0.0.1:$(cat "$dir/http.port")/)"
      db=$(proc_flag "$pid" database_uri || true)
      if [ -n "$pg_uri" ] && [ "$db" != "$pg_uri" ]; then
        echo "coordinator: uses $db, not PostgreSQL's $pg_uri: run deploy/stack.sh up $dir_arg"
        down=1
      fi
    else
      echo "coordinator: stopped"; down=1
    fi
    if pid=$(live_pid agent); then echo "agent: running (pid $pid)"; else echo "agent: stopped"; down=1; fi
    if [ -n "$pg_uri" ]; then echo "postgresql: running ($pg_uri)"; else echo "postgresql: stopped"; down=1; fi
    [ "$down" -eq 0 ] || exit 3 ;;
  env)
    [ -s "$dir/coordinator.port" ] && [ -s "$dir/http.port" ] ||
      { echo "stack.sh: no stack in $dir yet: run deploy/stack.sh up $dir_arg" >&2; exit 1; }
    echo "export FLEETMARK_COORDINATOR=127.0.0.1:$(cat "$dir/coordinator.port")"
    echo "export FLEETMARK_ADMIN_TOKEN_FILE=$dir/admin_token"
    echo "export FLEETMARK_WEB=http://127.0.0.1:$(cat "$dir/http.port")/" ;;
esac
