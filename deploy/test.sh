#!/usr/bin/env bash
# The whole fleetmark test suite on a fresh Debian 12 machine (run as root):
# installs dependencies, builds Release and sanitizer configurations, starts a private
# PostgreSQL on a free loopback port, runs every ctest (unit, integration with real
# gRPC + PostgreSQL, browser; the arm64/armhf device artifacts of deploy/dist.sh under
# qemu-user), then stops what it started.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
jobs=$(nproc)

deploy/install-deps.sh

echo "== build (Release)" >&2
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C build/release -j"$jobs"

pgdir=$(mktemp -d /tmp/fleetmark-test-pg.XXXXXX)
cleanup() { deploy/pg.sh stop "$pgdir" || true; rm -rf "$pgdir"; }
trap cleanup EXIT
export FLEETMARK_TEST_PG_URI=$(deploy/pg.sh start "$pgdir")
export FLEETMARK_TEST_REQUIRE_PG=1   # tests needing PostgreSQL must not skip here
echo "== PostgreSQL at $FLEETMARK_TEST_PG_URI" >&2

# Every stage runs even if an earlier one failed, so one run shows every failure;
# the exit code is non-zero if any stage failed.
failed=()
stage() {  # stage NAME COMMAND...
  echo "== $1" >&2
  local start=$SECONDS
  if ! "${@:2}"; then failed+=("$1"); echo "== FAILED: $1" >&2; fi
  echo "== $1: $((SECONDS - start)) s (load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
}

# The device artifacts (deploy/dist.sh arm64 and armhf: static agent + CLI, see
# tests/device) build once, in the background at low priority (nice 10: they take the
# CPU the stages below leave idle, e.g. while the Release tests wait on processes and
# PostgreSQL); the device stage, last, waits for them.
device_log=build/device-dist.log
device_start=$SECONDS
(for arch in arm64 armhf; do nice -n 10 deploy/dist.sh "$arch" || exit 1; done) >"$device_log" 2>&1 &
device_pid=$!

stage "tests (Release)" \
  ctest --test-dir build/release --output-on-failure -LE 'bench|device' -j1

sanitizer_build() {  # sanitizer_build DIR SANITIZERS TARGET
  cmake -S . -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DFLEETMARK_SANITIZE="$2" >/dev/null &&
    ninja -C "$1" -j"$jobs" "$3"
}
stage "build (Debug, ASan+UBSan)" sanitizer_build build/asan address,undefined fleetmark_sanitized_tests
stage "tests (Debug, ASan+UBSan)" env ASAN_OPTIONS=detect_leaks=1 \
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  ctest --test-dir build/asan --output-on-failure -L sanitize -j1

stage "build (Debug, TSan)" sanitizer_build build/tsan thread fleetmark_tsan_tests
stage "tests (Debug, TSan: strategies)" env TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
  ctest --test-dir build/tsan --output-on-failure -L tsan -j1

device_tests() {
  if ! wait "$device_pid"; then
    tail -n 60 "$device_log" >&2
    echo "== deploy/dist.sh failed (log: $device_log)" >&2
    return 1
  fi
  echo "== device artifacts built in $((SECONDS - device_start)) s" >&2
  ctest --test-dir build/release --output-on-failure -L device --no-tests=error -j1
}
stage "tests (device: arm64, armhf under qemu-user)" device_tests

if ((${#failed[@]})); then
  printf '== FAILED stages:\n' >&2; printf '   %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "== all tests passed" >&2
