#!/bin/sh
# Usage: coordinator_links_test.sh NINJA BUILD_DIR TARGET
# Fails if TARGET's link inputs (ninja -t inputs) hold one of the engine's executing
# libraries (strategies, scenarios, runner), or if the query itself finds nothing.
set -u
ninja=$1 build=$2 target=$3
inputs=$("$ninja" -C "$build" -t inputs "$target") || { echo "ninja -t inputs $target failed"; exit 1; }
# Sanity: the query sees the target's libraries at all (the plan validator is one).
echo "$inputs" | grep -q 'libfleetmark_plan\.a$' || { echo "no libfleetmark_plan.a among $target's inputs"; exit 1; }
bad=$(echo "$inputs" | grep -E 'libfleetmark_(strategies|scenarios|runner)\.a$')
if [ -n "$bad" ]; then
  echo "$target links the engine's strategies:"
  echo "$bad"
  exit 1
fi
echo "$target: $(echo "$inputs" | grep -c '\.a$') libraries, none of strategies/scenarios/runner"
