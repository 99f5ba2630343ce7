#!/usr/bin/env bash
# The whole fleetmark test suite on a fresh Debian 12 machine (run as root):
# installs dependencies (deploy/install-deps.sh test: the product's, the device builds'
# cross toolchains and the test tools), builds Release and sanitizer configurations, starts a private
# PostgreSQL on a free loopback port, runs every ctest (unit, integration with real
# gRPC + PostgreSQL, browser; the arm64/armhf device artifacts of deploy/dist.sh under
# qemu-user), then stops what it started.
#
# Time budget: 45 min on 2 cores from a cold start (no ccache, nothing built). The builds
# are CPU-bound and everything shares the 2 cores, so the CPU total is the budget; each
# stage prints its wall time and the CPU seconds (user+sys) it used. What keeps it low:
# - the device builds (deploy/dist.sh) run in the background at nice 10 from the start,
#   filling the CPU the other stages leave idle (the Release tests mostly wait);
# - the sanitizer builds and the device builds are unity builds (CMAKE_UNITY_BUILD:
#   batches of 8 sources per target, so each header is parsed and each inline function
#   compiled once per batch), and the sanitizer builds carry line tables only (-g1:
#   reports keep file:line); the Release build here is a unity build too, in its own
#   directory build/ci-release (developers' build/release stays one object per source,
#   so the shared ccache serves every worktree: a unity source names its files by
#   absolute path and hits only its own tree's entries). A unity build also proves that
#   no two files of a target define the same internal name.
#   deploy/test.sh        (no arguments; --help prints this; exit 0 when every stage passed)
set -euo pipefail
case "${1:-}" in -h|--help) sed -n '2,/^#   deploy\/test.sh /p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
if [ $# -ne 0 ]; then echo "usage: deploy/test.sh (no arguments; --help explains)" >&2; exit 2; fi
cd "$(dirname "$0")/.."
root=$(pwd)
jobs=$(nproc)

# CPU seconds (user+sys) of this shell's finished children (/proc/PID/stat fields 16-17
# counted after the command name). The background device builds count once waited for,
# in the device stage.
clk=$(getconf CLK_TCK)
cpu_s() { sed 's/^.*) //' "/proc/$$/stat" | awk -v t="$clk" '{ printf "%d", ($14 + $15) / t }'; }
load() { cut -d' ' -f1-3 /proc/loadavg; }

deploy/install-deps.sh test
echo "== install-deps: $SECONDS s, $(cpu_s) s CPU (load $(load))" >&2

# Every stage runs even if an earlier one failed, so one run shows every failure;
# the exit code is non-zero if any stage failed.
failed=()
stage() {  # stage NAME COMMAND...
  echo "== $1" >&2
  local start=$SECONDS cpu
  cpu=$(cpu_s)
  if ! "${@:2}"; then failed+=("$1"); echo "== FAILED: $1" >&2; fi
  echo "== $1: $((SECONDS - start)) s, $(($(cpu_s) - cpu)) s CPU (load $(load))" >&2
}

# The device artifacts (deploy/dist.sh arm64 and armhf: static agent + CLI, see
# tests/device) build once, in the background at low priority (nice 10: they take the
# CPU the stages below leave idle, e.g. while the Release tests wait on processes and
# PostgreSQL); the device stage, last, waits for them. Started first, so that fetching
# and building their dependency root (deploy/cross-deps.sh) overlaps the Release build.
mkdir -p build
device_log=build/device-dist.log
device_start=$SECONDS
# Its own process group (setsid), so that a failed Release build can stop it as a whole.
setsid -w bash -c 'for arch in arm64 armhf; do nice -n 10 deploy/dist.sh "$arch" || exit 1; done' \
  >"$device_log" 2>&1 &
device_pid=$!

release_build() {
  cmake -S . -B build/ci-release -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_UNITY_BUILD=ON >/dev/null &&
    ninja -C build/ci-release -j"$jobs"
}
stage "build (Release)" release_build
if ((${#failed[@]})); then  # nothing below can run without it
  kill -- "-$device_pid" 2>/dev/null || true
  exit 1
fi

pgdir=$(mktemp -d /tmp/fleetmark-test-pg.XXXXXX)
cleanup() { deploy/pg.sh stop "$pgdir" || true; rm -rf "$pgdir"; }
trap cleanup EXIT
export FLEETMARK_TEST_PG_URI=$(deploy/pg.sh start "$pgdir")
export FLEETMARK_TEST_REQUIRE_PG=1   # tests needing PostgreSQL must not skip here
echo "== PostgreSQL at $FLEETMARK_TEST_PG_URI" >&2

# One test per core at a time: most of them wait (on child processes, PostgreSQL, gRPC, the
# browser), and each has its own database, ports and temporary directories.
stage "tests (Release)" \
  ctest --test-dir build/ci-release --output-on-failure -LE 'bench|device' -j"$jobs"

sanitizer_build() {  # sanitizer_build DIR SANITIZERS TARGET
  cmake -S . -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DFLEETMARK_SANITIZE="$2" \
    -DCMAKE_UNITY_BUILD=ON -DCMAKE_CXX_FLAGS_DEBUG=-g1 >/dev/null &&
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
  ctest --test-dir build/ci-release --output-on-failure -L device --no-tests=error -j1
}
stage "tests (device: arm64, armhf under qemu-user)" device_tests

echo "== total: $SECONDS s, $(cpu_s) s CPU (load $(load))" >&2
if ((${#failed[@]})); then
  printf '== FAILED stages:\n' >&2; printf '   %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "== all tests passed" >&2
