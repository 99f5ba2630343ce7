#!/usr/bin/env bash
# deploy/android.sh against a stand-in adb (fake_adb) whose "phone" is a folder: push
# picks the tarball by ro.product.cpu.abi and copies the binaries to
# /data/local/tmp/fleetmark; start runs the real agent there detached (its own session,
# SIGHUP ignored: it outlives adb's shell); status/logs/stop; run runs a plan in local
# mode with the pushed CLI and pulls the JSON results; -s selects the device.
# The "arm64" tarball holds this machine's x86_64 build so that it runs here.
#   android_test.sh AGENT_BINARY CLI_BINARY
set -euo pipefail
agent_bin=$1
cli_bin=$2
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d)
cleanup() {
  if [ -f "$root/data/local/tmp/fleetmark/agent.pid" ]; then
    kill -9 "$(cat "$root/data/local/tmp/fleetmark/agent.pid")" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
pass=0
ok() { echo "ok: $*"; pass=$((pass + 1)); }

root=$tmp/phone
mkdir -p "$tmp/bin" "$root/system/bin" "$root/data/local/tmp"
cp "$here/fake_adb" "$tmp/bin/adb"
export PATH="$tmp/bin:$PATH" FAKE_ADB_ROOT=$root FAKE_ADB_SERIAL=R5CT1234 FAKE_ADB_LOG=$tmp/adb.log
abi=arm64-v8a
write_getprop() {
  cat > "$root/system/bin/getprop" <<GETPROP
#!/bin/sh
# stand-in for Android's getprop
case "\$1" in
  ro.product.cpu.abi) echo $1 ;;
  ro.serialno) echo R5CT1234 ;;
  ro.product.model) echo 'Pixel 7' ;;
  "") printf '[ro.product.cpu.abi]: [$1]\n[ro.product.model]: [Pixel 7]\n' ;;
  *) echo ;;
esac
GETPROP
  chmod 755 "$root/system/bin/getprop"
}
write_getprop "$abi"

# Tarballs as deploy/dist.sh lays them out.
make_tarball() {  # ARCH MARKER
  local name=fleetmark-0.0.0-linux-$1
  mkdir -p "$tmp/stage/$name/plans"
  cp "$agent_bin" "$tmp/stage/$name/fleetmark-agent"
  cp "$cli_bin" "$tmp/stage/$name/fleetmark"
  cp "$repo/plans/nightly.txtpb" "$tmp/stage/$name/plans/"
  echo "$2" > "$tmp/stage/$name/README"
  mkdir -p "$tmp/dist"
  tar -C "$tmp/stage" -czf "$tmp/dist/$name.tar.gz" "$name"
}
make_tarball arm64 "built for arm64"
make_tarball armhf "built for armhf"
android() { "$repo/deploy/android.sh" -s R5CT1234 "$@"; }
dev=$root/data/local/tmp/fleetmark

# push: the arm64 tarball for arm64-v8a, executable, plans and README beside it.
android push --dist "$tmp/dist" > "$tmp/out" || fail "push: $(cat "$tmp/out")"
grep -q "pushed arm64 binaries (arm64-v8a)" "$tmp/out" || fail "push said: $(cat "$tmp/out")"
[ -x "$dev/fleetmark-agent" ] && [ -x "$dev/fleetmark" ] || fail "binaries not executable in $dev"
cmp -s "$dev/fleetmark-agent" "$agent_bin" || fail "pushed agent differs"
[ "$(cat "$dev/README")" = "built for arm64" ] || fail "README: $(cat "$dev/README")"
[ -f "$dev/plans/nightly.txtpb" ] && [ -d "$dev/spool" ] || fail "plans/ or spool/ missing"
grep -q "^adb -s R5CT1234 push" "$tmp/adb.log" || fail "adb not called with -s SERIAL"
ok "push arm64"

# armeabi-v7a picks armhf; an unknown ABI is an error naming it.
write_getprop armeabi-v7a
android push --dist "$tmp/dist" > "$tmp/out" || fail "push armhf"
[ "$(cat "$dev/README")" = "built for armhf" ] || fail "armhf README: $(cat "$dev/README")"
write_getprop mips
if android push --dist "$tmp/dist" 2> "$tmp/err"; then fail "mips push succeeded"; fi
grep -q 'ro.product.cpu.abi: arm64-v8a, armeabi-v7a or x86_64 expected, got "mips"' "$tmp/err" ||
  fail "mips error: $(cat "$tmp/err")"
write_getprop arm64-v8a
android push --dist "$tmp/dist" > /dev/null
ok "push by ABI"

# Another serial: adb's own error, non-zero.
if "$repo/deploy/android.sh" -s OTHER status 2> "$tmp/err"; then fail "status on a missing device succeeded"; fi
ok "-s selects the device"

# Usage and bad input, checked on the host before adb is asked anything.
"$repo/deploy/android.sh" --help > "$tmp/out" || fail "--help exit $?"
grep -q 'android.sh \[-s SERIAL\] push' "$tmp/out" || fail "--help said: $(cat "$tmp/out")"
code=0
ADB=fleetmark-test-no-adb "$repo/deploy/android.sh" status 2> "$tmp/err" || code=$?
[ "$code" -eq 1 ] && grep -q 'fleetmark-test-no-adb not found on PATH (install the Debian package adb' "$tmp/err" ||
  fail "no adb: $code $(cat "$tmp/err")"
# Without adb, a bad command or flag is still a usage error (exit 2), not "adb not found".
code=0
ADB=fleetmark-test-no-adb "$repo/deploy/android.sh" bogus 2> "$tmp/err" || code=$?
[ "$code" -eq 2 ] && grep -q 'unknown command bogus' "$tmp/err" || fail "no adb, bad command: $code $(cat "$tmp/err")"
code=0
ADB=fleetmark-test-no-adb "$repo/deploy/android.sh" start --coordinator 1.2.3.4:99999 2> "$tmp/err" || code=$?
[ "$code" -eq 2 ] && grep -q -- '--coordinator: ' "$tmp/err" || fail "no adb, bad flag: $code $(cat "$tmp/err")"
esc=$'\x1b'
expect_bad() {  # PATTERN ARGS...: exit 2, PATTERN on stderr, no raw ESC, adb not called
  local pattern=$1 code=0
  shift
  : > "$tmp/adb.log"
  "$repo/deploy/android.sh" "$@" > "$tmp/out" 2> "$tmp/err" || code=$?
  [ "$code" -eq 2 ] && grep -qF -- "$pattern" "$tmp/err" || fail "$*: exit $code, $(cat "$tmp/err" "$tmp/out")"
  if grep -q "$esc" "$tmp/err" "$tmp/out"; then fail "$*: raw ESC echoed: $(od -c "$tmp/err")"; fi
  [ ! -s "$tmp/adb.log" ] || fail "$*: adb called: $(cat "$tmp/adb.log")"
}
# -s OTHER: the phone is unreachable, --dist is checked first.
expect_bad "--dist: no tarball or folder at $tmp/nonexistent" -s OTHER push --dist "$tmp/nonexistent"
expect_bad '--coordinator: HOST:PORT' -s R5CT1234 start --coordinator foo
expect_bad '--coordinator: HOST:PORT' -s R5CT1234 start --coordinator 'h:1;reboot'
expect_bad '--name: 1-64 characters' -s R5CT1234 start --coordinator 127.0.0.1:9 --name $'a\x1b[31mb'
grep -qF "\$'a\\E[31mb'" "$tmp/err" || fail "hostile name not shown escaped: $(cat "$tmp/err")"
expect_bad '--labels: key=value' -s R5CT1234 start --coordinator 127.0.0.1:9 --labels 'k=v;x'
expect_bad 'unknown command' -s R5CT1234 $'\x1b[2Jwipe'
ok "usage and bad input"

# start: an agent that exits at once is "exited", not "running", though its pid is
# still a zombie (here: its parent is a subreaper that does not reap it, as a
# container's init may be).
code=0
/usr/bin/python3 -c 'import ctypes, subprocess, sys
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER; waits for its child only
sys.exit(subprocess.call(sys.argv[1:]))' "$repo/deploy/android.sh" -s R5CT1234 start --coordinator 127.0.0.1:9 \
  -- --no_such_agent_flag > "$tmp/out" 2> "$tmp/err" || code=$?
[ "$code" -eq 1 ] && grep -q 'the agent exited at once' "$tmp/err" || fail "dead agent: $code $(cat "$tmp/out" "$tmp/err")"
ok "start: an agent that died is not running"

# start: detached, as this user, spool and log in the folder; a second start says so.
echo "fm_enroll_secret" > "$tmp/token"
android start --coordinator 127.0.0.1:9 --token_file "$tmp/token" --labels rack=b \
  -- --reconnect_max_delay=1s > "$tmp/out" || fail "start: $(cat "$tmp/out")"
grep -q 'agent "android-R5CT1234" running (pid' "$tmp/out" || fail "start said: $(cat "$tmp/out")"
pid=$(cat "$dev/agent.pid")
kill -0 "$pid" || fail "agent $pid not running"
[ "$(ps -o sid= -p "$pid" | tr -d ' ')" = "$pid" ] || fail "agent is not a session leader (not detached)"
[ "$(ps -o sid= -p "$pid" | tr -d ' ')" != "$(ps -o sid= -p $$ | tr -d ' ')" ] || fail "agent in our session"
tr '\0' ' ' < "/proc/$pid/cmdline" | grep -q -- "--spool_dir=$dev/spool" || fail "spool not in $dev"
[ "$(stat -c %a "$dev/enrollment_token")" = 600 ] || fail "token mode $(stat -c %a "$dev/enrollment_token")"
kill -HUP "$pid"
sleep 0.5
kill -0 "$pid" || fail "agent died of SIGHUP (cable pulled)"
android start --coordinator 127.0.0.1:9 | grep -q "already running (pid $pid)" || fail "second start"
ok "start detached"

# status and logs.
android status > "$tmp/out" || fail "status exit $?"
grep -q "agent running (pid $pid)" "$tmp/out" || fail "status said: $(cat "$tmp/out")"
for _ in $(seq 1 50); do grep -q "dialing 127.0.0.1:9" "$dev/agent.log" && break; sleep 0.2; done
android logs --lines 50 | grep -q 'fleetmark-agent .* "android-R5CT1234" dialing 127.0.0.1:9' ||
  fail "logs: $(android logs)"
ok "status and logs"

# stop: gone, status exit 3.
android stop | grep -q "agent stopped (pid $pid)" || fail "stop"
for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
if kill -0 "$pid" 2>/dev/null; then fail "agent $pid still running after stop"; fi
code=0
android status > "$tmp/out" || code=$?
[ "$code" -eq 3 ] && grep -q "agent not running" "$tmp/out" || fail "status after stop: $code $(cat "$tmp/out")"
ok "stop"

# run: a plan in local mode on the phone, results pulled.
cat > "$tmp/tiny.txtpb" <<'PLAN'
name: "tiny"
matrix {
  strategies { name: "direct" }
  strategies { name: "single_thread" }
  workloads: ["arithmetic"]
  batch { tasks: 10 }
}
measurement { warmup_seconds: 0 min_repetitions: 3 max_repetitions: 3 max_seconds_per_case: 2 rounds: 1 }
PLAN
android run "$tmp/tiny.txtpb" --out "$tmp/results" > "$tmp/out" || fail "run: $(cat "$tmp/out")"
result=$(sed -n 's/^results: //p' "$tmp/out")
[ -f "$result" ] || fail "no pulled results ($(cat "$tmp/out"))"
/usr/bin/python3 - "$result" <<'PY' || fail "results JSON"
import json, sys
report = json.load(open(sys.argv[1]))
results = report["devices"][0]["results"]
ids = sorted(r["spec"]["case_id"] for r in results)
assert report["schema_version"] == 1, report["schema_version"]
assert len(ids) == 2 and all(r.get("status") == "CASE_STATUS_OK" for r in results), results
assert report["run"]["plan_name"] == "tiny", report["run"]
print("pulled", ids)
PY
ok "run pulls results"

echo "$pass passed, 0 failed"
