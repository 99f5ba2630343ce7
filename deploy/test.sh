#!/usr/bin/env bash
# The whole fleetmark test suite on a fresh Debian 12 machine (run as root):
# installs dependencies, builds Release and sanitizer configurations, starts a private
# PostgreSQL on a free loopback port, runs every ctest (unit, integration with real
# gRPC + PostgreSQL, browser), then stops what it started.
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

echo "== tests (Release)" >&2
ctest --test-dir build/release --output-on-failure -LE 'bench' -j1

echo "== tests (Debug, ASan+UBSan)" >&2
cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DFLEETMARK_SANITIZE=address,undefined >/dev/null
ninja -C build/asan -j"$jobs" fleetmark_sanitized_tests
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  ctest --test-dir build/asan --output-on-failure -L sanitize -j1

echo "== tests (Debug, TSan: strategies)" >&2
cmake -S . -B build/tsan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DFLEETMARK_SANITIZE=thread >/dev/null
ninja -C build/tsan -j"$jobs" fleetmark_tsan_tests
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
  ctest --test-dir build/tsan --output-on-failure -L tsan -j1

echo "== all tests passed" >&2
