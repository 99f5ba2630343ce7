#!/usr/bin/env bash
# The deploy scripts' argument handling, no build: deploy/dist.sh's usage, extra
# arguments, an escaped hostile ARCH and its lock (a second dist.sh of one ARCH waits,
# then fails clearly, while the first holds dist/.dist-ARCH.lock); deploy/install-deps.sh's
# PROFILE (run|dist|test: a bad one is one clear error; the quickstart's run profile
# holds no cross compiler, browser or test tool); deploy/stack.sh status
# of a folder that does not exist (not created, exit 3); deploy/lib/pid.sh on a zombie.
#   scripts_args_test.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d)
parent=""
cleanup() {
  [ -z "$parent" ] || kill "$parent" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
pass=0
ok() { echo "ok: $*"; pass=$((pass + 1)); }
esc=$'\x1b'

# dist.sh: no ARCH, an extra argument, a hostile ARCH: exit 2, one clean line.
code=0; "$repo/deploy/dist.sh" 2> "$tmp/err" || code=$?
[ "$code" -eq 2 ] && grep -qx 'usage: deploy/dist.sh x86_64|arm64|armhf' "$tmp/err" || fail "no ARCH: $code $(cat "$tmp/err")"
code=0; "$repo/deploy/dist.sh" arm64 extra 2> "$tmp/err" || code=$?
[ "$code" -eq 2 ] && grep -q 'usage: deploy/dist.sh' "$tmp/err" || fail "extra argument: $code $(cat "$tmp/err")"
code=0; "$repo/deploy/dist.sh" "${esc}[31mred" 2> "$tmp/err" || code=$?
[ "$code" -eq 2 ] && grep -qF 'ARCH must be x86_64, arm64 or armhf' "$tmp/err" || fail "bad ARCH: $code $(cat "$tmp/err")"
if grep -q "$esc" "$tmp/err"; then fail "raw ESC echoed: $(od -c "$tmp/err")"; fi
grep -qF '\E[31mred' "$tmp/err" || fail "ARCH not shown escaped: $(cat "$tmp/err")"
"$repo/deploy/dist.sh" --help > "$tmp/out" || fail "dist.sh --help exit $?"
grep -q 'deploy/dist.sh ARCH' "$tmp/out" || fail "dist.sh --help said: $(cat "$tmp/out")"
ok "dist.sh arguments"

# The README's two commands and stack.sh: --help prints the header and exits 0 without
# doing anything; an argument they do not take is exit 2 (the quickstart once ran its
# whole 30-minute job for `--help`).
for script in quickstart test; do
  "$repo/deploy/$script.sh" --help > "$tmp/out" 2>&1 || fail "$script.sh --help exit $?: $(cat "$tmp/out")"
  grep -q 'fresh Debian 12 machine' "$tmp/out" || fail "$script.sh --help said: $(cat "$tmp/out")"
  code=0; "$repo/deploy/$script.sh" extra > "$tmp/out" 2>&1 || code=$?
  [ "$code" -eq 2 ] && grep -qx "usage: deploy/$script.sh (no arguments; --help explains)" "$tmp/out" ||
    fail "$script.sh extra: $code $(cat "$tmp/out")"
done
"$repo/deploy/stack.sh" --help > "$tmp/out" || fail "stack.sh --help exit $?"
grep -q 'deploy/stack.sh up \[DIR\]' "$tmp/out" || fail "stack.sh --help said: $(cat "$tmp/out")"
ok "quickstart.sh, test.sh and stack.sh --help and extra arguments"

# install-deps.sh: no PROFILE, an extra argument, a hostile PROFILE: exit 2, one line
# naming the allowed values, the value escaped; nothing installed (--list installs
# nothing and prints the profile's packages).
deps=$repo/deploy/install-deps.sh
for args in "" "run extra" "run --list extra"; do
  code=0; "$deps" $args > "$tmp/out" 2> "$tmp/err" || code=$?
  [ "$code" -eq 2 ] && grep -qx 'usage: deploy/install-deps.sh run|dist|test \[--list\] (--help explains)' "$tmp/err" ||
    fail "install-deps.sh '$args': $code $(cat "$tmp/err")"
done
code=0; "$deps" "${esc}[31mall" 2> "$tmp/err" || code=$?
[ "$code" -eq 2 ] && [ "$(wc -l < "$tmp/err")" -eq 1 ] &&
  grep -qF "install-deps: PROFILE must be run, dist or test (got \$'\E[31mall')" "$tmp/err" ||
  fail "bad PROFILE: $code $(cat -v "$tmp/err")"
if grep -q "$esc" "$tmp/err"; then fail "raw ESC echoed: $(od -c "$tmp/err")"; fi
"$deps" --help > "$tmp/out" || fail "install-deps.sh --help exit $?"
grep -q 'deploy/install-deps.sh run ' "$tmp/out" || fail "install-deps.sh --help said: $(cat "$tmp/out")"
for p in run dist test; do "$deps" "$p" --list > "$tmp/$p.list" || fail "$p --list exit $?"; done
grep -qx 'postgresql-15' "$tmp/run.list" && grep -qx 'libgrpc++-dev' "$tmp/run.list" ||
  fail "run profile lacks the product's dependencies: $(cat "$tmp/run.list")"
for p in crossbuild-essential-arm64 crossbuild-essential-armhf qemu-user-static chromium prometheus lintian; do
  if grep -qx "$p" "$tmp/run.list"; then fail "the quickstart's run profile installs $p"; fi
  grep -qx "$p" "$tmp/test.list" || fail "the test profile lacks $p"
done
grep -qx 'qemu-user-static' "$tmp/dist.list" || fail "the dist profile lacks qemu-user-static"
# Each larger profile holds the smaller one whole, and no package is listed twice.
[ -z "$(comm -23 <(sort "$tmp/run.list") <(sort "$tmp/dist.list"))" ] &&
  [ -z "$(comm -23 <(sort "$tmp/dist.list") <(sort "$tmp/test.list"))" ] || fail "profiles do not nest"
[ -z "$(sort "$tmp/test.list" | uniq -d)" ] || fail "packages listed twice: $(sort "$tmp/test.list" | uniq -d)"
grep -qx 'deploy/install-deps.sh run' "$repo/deploy/quickstart.sh" || fail "quickstart.sh does not install the run profile"
grep -qx 'deploy/install-deps.sh test' "$repo/deploy/test.sh" || fail "test.sh does not install the test profile"
grep -qx 'deploy/install-deps.sh dist' "$repo/deploy/dist.sh" || fail "dist.sh does not install the dist profile"
ok "install-deps.sh profiles"

# dist.sh's lock: held (by us, or by a real dist.sh arm64 running now), a second run
# gives up after FLEETMARK_DIST_LOCK_TIMEOUT seconds, saying why, without building.
mkdir -p "$repo/dist"
lock=$repo/dist/.dist-arm64.lock
# Held by this shell's fd 8 (dist.sh opens its own, so flock sees two holders).
exec 8> "$lock"
flock -n 8 || true
code=0
FLEETMARK_DIST_LOCK_TIMEOUT=1 "$repo/deploy/dist.sh" arm64 > "$tmp/out" 2> "$tmp/err" || code=$?
[ "$code" -eq 1 ] && grep -q 'another deploy/dist.sh arm64 is running' "$tmp/err" ||
  fail "second dist.sh: $code $(cat "$tmp/err")"
if grep -q 'building in' "$tmp/err"; then fail "second dist.sh built: $(cat "$tmp/err")"; fi
exec 8>&-
ok "dist.sh lock"

# stack.sh status of no stack: exit 3, says so, creates nothing.
code=0
"$repo/deploy/stack.sh" status "$tmp/nostack" > "$tmp/out" 2>&1 || code=$?
[ "$code" -eq 3 ] && grep -q "no stack at $tmp/nostack" "$tmp/out" || fail "status: $code $(cat "$tmp/out")"
[ ! -e "$tmp/nostack" ] || fail "status created $tmp/nostack"
ok "stack.sh status without a stack"

# stack.sh with more than one DIR: usage (exit 2), nothing started; an unprintable DIR is
# shell-quoted in messages, never echoed raw.
code=0
"$repo/deploy/stack.sh" up "$tmp/extra" b > "$tmp/out" 2>&1 || code=$?
[ "$code" -eq 2 ] && grep -q "usage:" "$tmp/out" && [ ! -e "$tmp/extra" ] || fail "up with 2 dirs: $code $(cat "$tmp/out")"
code=0
"$repo/deploy/stack.sh" status "$tmp/$(printf 'e\033[31m')" > "$tmp/out" 2>&1 || code=$?
[ "$code" -eq 3 ] && ! grep -q "$(printf '\033')" "$tmp/out" || fail "status with an escape: $code $(cat -v "$tmp/out")"
ok "stack.sh refuses extra arguments and escapes DIR"

# pid_runs: a live process of the binary yes; a zombie, another binary, junk no.
# shellcheck source=deploy/lib/pid.sh
. "$repo/deploy/lib/pid.sh"
sleep 60 > /dev/null 2>&1 &
live=$!
# Until the forked shell has exec'd sleep, its cmdline is still bash's.
for _ in $(seq 100); do pid_runs "$live" sleep && break; sleep 0.1; done
pid_runs "$live" sleep || fail "live sleep not running"
if pid_runs "$live" fleetmark-agent; then fail "sleep taken for fleetmark-agent"; fi
kill "$live"; wait "$live" 2>/dev/null || true
# A zombie: the child's parent (exec'd into sleep) never waits for it.
bash -c 'sleep 0.2 & echo $! > "$1"; exec sleep 30' _ "$tmp/zpid" > /dev/null 2>&1 &
parent=$!
for _ in $(seq 50); do [ -s "$tmp/zpid" ] && break; sleep 0.1; done
zombie=$(cat "$tmp/zpid")
for _ in $(seq 50); do [ "$(ps -o stat= -p "$zombie" | cut -c1)" = Z ] && break; sleep 0.1; done
[ "$(ps -o stat= -p "$zombie" | cut -c1)" = Z ] || fail "no zombie made"
kill -0 "$zombie" || fail "kill -0 refuses the zombie (test premise)"
if pid_runs "$zombie" sleep; then fail "zombie $zombie counted as running"; fi
kill "$parent"; wait "$parent" 2>/dev/null || true
parent=""
if pid_runs "12x" sleep || pid_runs "" sleep; then fail "junk pid accepted"; fi
ok "pid_runs"

echo "$pass passed, 0 failed"
