#!/usr/bin/env bash
# fleetmark on an Android phone over adb: no root, everything in /data/local/tmp/fleetmark
# (the binaries, the spool, the log). The agent runs as the shell user, detached
# (setsid + nohup), so it keeps running when the USB cable is pulled.
#
#   deploy/android.sh [-s SERIAL] push [--dist TARBALL|DIR]
#   deploy/android.sh [-s SERIAL] start --coordinator IP:PORT [--token_file FILE]
#                                       [--name NAME] [--labels k=v,...] [-- AGENT FLAGS...]
#   deploy/android.sh [-s SERIAL] stop | status | logs [--lines N]
#   deploy/android.sh [-s SERIAL] run PLAN [--out DIR] [-- FLEETMARK RUN FLAGS...]
#
# push picks the tarball by the phone's ro.product.cpu.abi (arm64-v8a -> arm64,
# armeabi-v7a -> armhf, x86_64 -> x86_64): dist/fleetmark-VERSION-linux-ARCH.tar.gz
# (deploy/dist.sh ARCH), or --dist: a tarball, a folder of tarballs, or an unpacked
# folder holding fleetmark-agent and fleetmark. start's default name is android-SERIALNO
# (ro.serialno). run pushes PLAN, runs it in local mode on the phone (`fleetmark run`,
# no coordinator) and pulls the JSON results to --out (default ./android-results).
# --coordinator HOST:PORT, IP:PORT, [IPv6]:PORT or dns:///HOST:PORT; --name
# [A-Za-z0-9._-]{1,64}; --labels key=value[,key=value]: checked here before anything is
# pushed. The agent counts as running while its pid is alive and runs fleetmark-agent
# (not a zombie, not a reused pid: deploy/lib/pid.sh).
# Exit codes: 0 ok; 1 failed (also: no adb); 2 bad usage; 3 status: agent not running.
# $ADB names the adb binary (default: adb on PATH; Debian package adb).
set -euo pipefail

ADB=${ADB:-adb}
DEVICE_DIR=/data/local/tmp/fleetmark
repo=$(cd "$(dirname "$0")/.." && pwd)

usage() {
  sed -n '5,10p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
help() { sed -n '5,/^# \$ADB/p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
die() { echo "android.sh: $*" >&2; exit 1; }
bad() { echo "android.sh: $*" >&2; exit 2; }

# shellcheck source=deploy/lib/dist.sh
. "$repo/deploy/lib/dist.sh"
# shellcheck source=deploy/lib/args.sh
. "$repo/deploy/lib/args.sh"

serial_args=()
if [ "${1:-}" = "-s" ]; then
  [ $# -ge 2 ] || bad "-s needs a serial number"
  serial_args=(-s "$2")
  shift 2
fi
[ $# -ge 1 ] || usage
command=$1
shift
case "$command" in -h|--help|help) help ;; esac
# adb is looked for at its first use, so a bad command or flag is reported (exit 2)
# before a missing adb (exit 1).
adb_() {
  command -v "$ADB" >/dev/null 2>&1 ||
    die "$(shown "$ADB") not found on PATH (install the Debian package adb, or Android's platform-tools; \$ADB names another)"
  "$ADB" "${serial_args[@]}" "$@"
}
# Runs a command line on the phone; its exit status is the command's (adb >= 7).
on_phone() { adb_ shell "$1"; }
prop() { on_phone "getprop $1" | tr -d '\r'; }

# dist ARCH name for an Android ABI.
arch_of_abi() {
  case "$1" in
    arm64-v8a) echo arm64 ;;
    armeabi-v7a|armeabi) echo armhf ;;
    x86_64) echo x86_64 ;;
    *) return 1 ;;
  esac
}

cmd_push() {
  local dist=$repo/dist
  while [ $# -gt 0 ]; do
    case "$1" in
      --dist) [ $# -ge 2 ] || bad "--dist needs a path"; dist=$2; shift 2 ;;
      --dist=*) dist=${1#--dist=}; shift ;;
      *) bad "push: unknown argument $(shown "$1")" ;;
    esac
  done
  [ -e "$dist" ] || bad "--dist: no tarball or folder at $(shown "$dist")"
  local abi arch
  abi=$(prop ro.product.cpu.abi) || die "cannot reach the phone (adb ${serial_args[*]} shell)"
  arch=$(arch_of_abi "$abi") || die "ro.product.cpu.abi: arm64-v8a, armeabi-v7a or x86_64 expected, got \"$abi\""
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  local bin
  bin=$(dist_binaries "$arch" "$dist" "$work")
  on_phone "mkdir -p $DEVICE_DIR/plans $DEVICE_DIR/spool $DEVICE_DIR/results"
  adb_ push "$bin/fleetmark-agent" "$bin/fleetmark" "$DEVICE_DIR/" >/dev/null
  if [ -d "$bin/plans" ]; then
    for plan in "$bin"/plans/*; do adb_ push "$plan" "$DEVICE_DIR/plans/" >/dev/null; done
  fi
  [ -f "$bin/README" ] && adb_ push "$bin/README" "$DEVICE_DIR/README" >/dev/null
  on_phone "chmod 755 $DEVICE_DIR/fleetmark-agent $DEVICE_DIR/fleetmark"
  echo "pushed $arch binaries ($abi) to $DEVICE_DIR"
}

# "running PID" or "stopped", from the pid file (pid_runs of deploy/lib/pid.sh, run on
# the phone).
agent_state() {
  on_phone "$(sed "/^#/d" "$repo/deploy/lib/pid.sh")
cd $DEVICE_DIR 2>/dev/null && [ -f agent.pid ] && p=\$(cat agent.pid) && pid_runs \"\$p\" fleetmark-agent && echo running \$p || echo stopped" | tr -d '\r'
}

cmd_start() {
  local coordinator="" token_file="" name="" labels=""
  local extra=()
  while [ $# -gt 0 ]; do
    case "$1" in
      --coordinator|--token_file|--name|--labels)
        [ $# -ge 2 ] || bad "$1 needs a value"
        case "$1" in
          --coordinator) coordinator=$2 ;; --token_file) token_file=$2 ;;
          --name) name=$2 ;; --labels) labels=$2 ;;
        esac
        shift 2 ;;
      --) shift; extra=("$@"); break ;;
      *) bad "start: unknown argument $(shown "$1") (agent flags go after --)" ;;
    esac
  done
  [ -n "$coordinator" ] || bad "start: --coordinator IP:PORT is required"
  check_coordinator --coordinator "$coordinator"
  [ -z "$name" ] || check_name --name "$name"
  check_labels --labels "$labels"
  [ -z "$token_file" ] || [ -r "$token_file" ] || bad "--token_file: cannot read $(shown "$token_file")"
  local state
  state=$(agent_state)
  if [ "${state%% *}" = running ]; then
    echo "agent already running (pid ${state#running })"
    return 0
  fi
  on_phone "[ -x $DEVICE_DIR/fleetmark-agent ]" || die "no agent on the phone: run $0 push first"
  if [ -z "$name" ]; then
    name="android-$(prop ro.serialno | tr -d '\n' | tr -c 'A-Za-z0-9._-' '_')"
  fi
  local args=(--coordinator="$coordinator" --name="$name" --spool_dir="$DEVICE_DIR/spool")
  [ -n "$labels" ] && args+=(--labels="$labels")
  if [ -n "$token_file" ]; then
    [ -r "$token_file" ] || bad "--token_file: cannot read $token_file"
    adb_ push "$token_file" "$DEVICE_DIR/enrollment_token" >/dev/null
    on_phone "chmod 600 $DEVICE_DIR/enrollment_token"
    args+=(--token_file="$DEVICE_DIR/enrollment_token")
  fi
  args+=("${extra[@]}")
  local line="./fleetmark-agent"
  for a in "${args[@]}"; do line+=" $(sh_quote "$a")"; done
  # setsid: a session of its own (no controlling terminal, not killed with adb's shell);
  # nohup: SIGHUP ignored; stdin from /dev/null so adb does not wait for it.
  on_phone "cd $DEVICE_DIR && if command -v setsid >/dev/null 2>&1; then d='setsid nohup'; else d=nohup; fi; \$d $line >>agent.log 2>&1 </dev/null & echo \$! >agent.pid"
  sleep 1
  state=$(agent_state)
  if [ "${state%% *}" != running ]; then
    on_phone "tail -n 20 $DEVICE_DIR/agent.log" >&2 || true
    die "the agent exited at once (log above)"
  fi
  echo "agent \"$name\" running (pid ${state#running }), log $DEVICE_DIR/agent.log"
}

cmd_stop() {
  [ $# -eq 0 ] || bad "stop takes no arguments"
  local state
  state=$(agent_state)
  if [ "${state%% *}" != running ]; then
    echo "agent not running"
    return 0
  fi
  local pid=${state#running }
  # SIGTERM lets it finish the result in flight; SIGKILL after 10 s (the spool keeps it).
  on_phone "kill $pid; i=0; while kill -0 $pid 2>/dev/null && [ \$i -lt 20 ]; do sleep 0.5; i=\$((i+1)); done; kill -0 $pid 2>/dev/null && kill -9 $pid; rm -f $DEVICE_DIR/agent.pid"
  echo "agent stopped (pid $pid)"
}

cmd_status() {
  [ $# -eq 0 ] || bad "status takes no arguments"
  local state
  state=$(agent_state)
  if [ "${state%% *}" = running ]; then
    echo "agent running (pid ${state#running })"
    on_phone "tail -n 3 $DEVICE_DIR/agent.log 2>/dev/null" | tr -d '\r' || true
    return 0
  fi
  echo "agent not running"
  return 3
}

cmd_logs() {
  local lines=100
  while [ $# -gt 0 ]; do
    case "$1" in
      --lines) [ $# -ge 2 ] || bad "--lines needs a number"; lines=$2; shift 2 ;;
      *) bad "logs: unknown argument $1" ;;
    esac
  done
  [[ "$lines" =~ ^[0-9]+$ ]] && [ "$lines" -ge 1 ] || bad "--lines: a number >= 1, got \"$lines\""
  on_phone "tail -n $lines $DEVICE_DIR/agent.log" | tr -d '\r'
}

cmd_run() {
  [ $# -ge 1 ] || bad "run needs a plan file"
  local plan=$1 out=./android-results
  shift
  local extra=()
  while [ $# -gt 0 ]; do
    case "$1" in
      --out) [ $# -ge 2 ] || bad "--out needs a folder"; out=$2; shift 2 ;;
      --) shift; extra=("$@"); break ;;
      *) bad "run: unknown argument $1 (fleetmark run flags go after --)" ;;
    esac
  done
  [ -f "$plan" ] || bad "run: no plan file $plan"
  on_phone "[ -x $DEVICE_DIR/fleetmark ]" || die "no fleetmark CLI on the phone: run $0 push first"
  local base stamp
  base=$(basename "$plan")
  stamp=$(date -u +%Y%m%dT%H%M%SZ)
  local result="results/${base%.*}-$stamp.json"
  adb_ push "$plan" "$DEVICE_DIR/plans/$base" >/dev/null
  local line="./fleetmark run $(sh_quote "plans/$base") --format json --out $(sh_quote "$result")"
  for a in "${extra[@]}"; do line+=" $(sh_quote "$a")"; done
  local code=0
  on_phone "cd $DEVICE_DIR && $line" || code=$?
  # Exit 3 (some case failed) still wrote the results; pull whatever was written.
  mkdir -p "$out"
  if adb_ pull "$DEVICE_DIR/$result" "$out/" >/dev/null 2>&1; then
    echo "results: $out/$(basename "$result")"
  else
    echo "android.sh: no results written on the phone (fleetmark run exit $code)" >&2
    [ "$code" -ne 0 ] || code=1
  fi
  return "$code"
}

case "$command" in
  push) cmd_push "$@" ;;
  start) cmd_start "$@" ;;
  stop) cmd_stop "$@" ;;
  status) cmd_status "$@" ;;
  logs) cmd_logs "$@" ;;
  run) cmd_run "$@" ;;
  *) bad "unknown command $(shown "$command") (push, start, stop, status, logs, run; --help)" ;;
esac
