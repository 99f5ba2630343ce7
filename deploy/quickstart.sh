#!/usr/bin/env bash
# fleetmark quickstart on a fresh Debian 12 machine (run as root): installs what
# building and running the product needs (deploy/install-deps.sh run: no cross
# compilers, browser or test tools; deploy/test.sh and deploy/dist.sh add those), builds, brings up the whole stack on this machine (a private
# PostgreSQL in .fleetmark/, the coordinator with its web view, one agent; see
# deploy/stack.sh), submits the S1 framework study with quick settings, waits for it,
# prints the results table, the web address, and last the verdict in one sentence for
# S1's network tasks (`fleetmark recommend --workload network`) with the command that
# asks for one's own task. Re-running it reuses the data.
#   deploy/quickstart.sh        (no arguments; --help prints this)
# Exit status: submit --wait's (0; 3 when some case failed, as for `fleetmark run`); 2 usage.
set -euo pipefail
case "${1:-}" in -h|--help) sed -n '2,/^# Exit status/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
if [ $# -ne 0 ]; then echo "usage: deploy/quickstart.sh (no arguments; --help explains)" >&2; exit 2; fi
cd "$(dirname "$0")/.."
deploy/install-deps.sh run
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
# Only the product (the test command builds the tests).
ninja -C build/release -j"$(nproc)" fleetmark fleetmark-coordinator fleetmark-agent fleetmark_web
deploy/stack.sh up .fleetmark
eval "$(deploy/stack.sh env .fleetmark)"
fleetmark=build/release/coordinator/cli/fleetmark
connect=(--coordinator="$FLEETMARK_COORDINATOR" --admin_token_file="$FLEETMARK_ADMIN_TOKEN_FILE")
status=0
"$fleetmark" submit plans/s1-frameworks.txtpb --select all --quick --wait "${connect[@]}" || status=$?
echo
echo "web view: $FLEETMARK_WEB   (stop everything: deploy/stack.sh down)"
# The answer, from the run just measured: one sentence per agent (the JSON's "sentence").
verdict=$("$fleetmark" recommend --workload network --plan_latest s1-frameworks --format json "${connect[@]}" |
  sed -n 's/^ *"sentence": "\(.*\)",\{0,1\}$/\1/p') || true
echo
echo "verdict for 100 tasks that wait on the network (S1, this machine): ${verdict:-no answer (the S1 run did not finish)}"
echo "ask for your own task: $fleetmark recommend --profile 'cpu_us=50,wait_us=2000' --measure"
exit "$status"
