#!/usr/bin/env bash
# Fleet health end to end on a private stack (deploy/stack.sh), for notes and web
# screenshots: a confirmed change, then a quarantine, on the stack's real local agent.
#
#   tests/demo/health_demo.sh [DIR]      # default DIR: /tmp/fleetmark-health-demo
#
# 1. Six nightly runs of a small plan (schedule "demo", fired with `schedules run`), then
#    two CPU hogs and a seventh: its slower points start a change, the coordinator runs a
#    confirmation of just those cases (hogs still running) and the change is confirmed.
# 2. Four calibration nights (schedule "calibration": plans/nightly.txtpb --filter
#    calibration) quiet, a fifth under the hogs: the calibration drift quarantines the agent.
# Prints `changes list`, `runs list` and `agents list`, and the web view's address
# (History: /history?case=...&agents=...&nightly=1; Fleet: /fleet). Leaves the stack up
# (`deploy/stack.sh down DIR` stops it; `fleetmark agents release NAME` ends the quarantine).
# Takes about 2 minutes on a 2-core machine. Needs the release build (FLEETMARK_BUILD).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:-/tmp/fleetmark-health-demo}
export FLEETMARK_BUILD=${FLEETMARK_BUILD:-$root/build/release}
fm="$FLEETMARK_BUILD/coordinator/cli/fleetmark"

"$root/deploy/stack.sh" up "$dir"
eval "$("$root/deploy/stack.sh" env "$dir")"

hogs=()
start_hogs() { for _ in 1 2; do (while :; do :; done) & hogs+=($!); done; }
stop_hogs() { for pid in "${hogs[@]}"; do kill "$pid" 2>/dev/null || true; done; hogs=(); }
trap stop_hogs EXIT

# Fires schedule $1 and waits until its run ended.
last_run=
night() {
  local run
  run=$("$fm" schedules run "$1")
  last_run=$run
  for _ in $(seq 600); do
    if "$fm" runs show "$run" | head -1 | grep -Eq "  (done|failed|cancelled)  "; then return 0; fi
    sleep 0.5
  done
  echo "health_demo: run $run of schedule $1 did not end" >&2
  return 1
}

cat > "$dir/demo-plan.txtpb" <<'PLAN'
name: "demo"
matrix {
  strategies { name: "direct" }
  strategies { name: "fixed_pool" threads: 2 }
  workloads: [ "arithmetic" ]
  batch { tasks: 100000 }
}
measurement { warmup_seconds: 0.05 max_repetitions: 15 max_seconds_per_case: 2 rounds: 2 }
PLAN
for s in demo calibration; do "$fm" schedules delete "$s" >/dev/null 2>&1 || true; done
"$fm" schedules create demo "$dir/demo-plan.txtpb" --cron '0 3 * * *' --select all
"$fm" schedules create calibration "$root/plans/nightly.txtpb" --cron '0 4 * * *' --select all --filter calibration

echo "== 1. confirmed change: 6 quiet nights, then one under 2 CPU hogs"
for _ in 1 2 3 4 5 6; do night demo; done
start_hogs
night demo
# Until the change the hog night started is decided (its confirmation ran, hogs still on).
hog_run=${last_run:0:8}
for _ in $(seq 240); do
  if "$fm" changes list | grep -F "$hog_run" | grep -Eq "  (confirmed|not_reproduced|unconfirmed)"; then break; fi
  sleep 0.5
done
stop_hogs
"$fm" changes list
"$fm" runs list --limit 4

echo "== 2. quarantine: 4 quiet calibration nights, then one under 2 CPU hogs"
for _ in 1 2 3 4; do night calibration; done
start_hogs
night calibration
stop_hogs
"$fm" agents list

web=$(cat "$dir/http.port" 2>/dev/null || true)
echo "== web view: ${FLEETMARK_WEB:-http://127.0.0.1:${web:-PORT}/} (History of a changed case with nightly=1; Fleet)"
