#!/usr/bin/env bash
# deploy/install-agent.sh below a root folder (--root) with a recording stand-in for
# systemctl: files, modes and agent.env; the unit installed, daemon-reload and
# enable --now; without systemd the printed command line runs the installed agent;
# --uninstall removes everything but the spool (unless --purge).
#   install_agent_test.sh AGENT_BINARY CLI_BINARY
set -euo pipefail
agent_bin=$1
cli_bin=$2
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d)
agent_pid=""
cleanup() {
  [ -z "$agent_pid" ] || kill -9 "$agent_pid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
pass=0
ok() { echo "ok: $*"; pass=$((pass + 1)); }

case "$(uname -m)" in x86_64) arch=x86_64 ;; aarch64) arch=arm64 ;; *) arch=armhf ;; esac
name=fleetmark-0.0.0-linux-$arch
mkdir -p "$tmp/stage/$name/plans" "$tmp/dist"
cp "$agent_bin" "$tmp/stage/$name/fleetmark-agent"
cp "$cli_bin" "$tmp/stage/$name/fleetmark"
cp "$repo/plans/nightly.txtpb" "$tmp/stage/$name/plans/"
tar -C "$tmp/stage" -czf "$tmp/dist/$name.tar.gz" "$name"
cat > "$tmp/systemctl" <<'STUB'
#!/bin/sh
echo "systemctl $*" >> "$(dirname "$0")/systemctl.log"
STUB
chmod +x "$tmp/systemctl"
echo "fm_secret_token" > "$tmp/token"
install_() { "$repo/deploy/install-agent.sh" --dist "$tmp/dist" --systemctl "$tmp/systemctl" "$@"; }

# With systemd.
r=$tmp/root1
install_ --root "$r" --systemd yes --coordinator 10.0.0.5:7443 --token_file "$tmp/token" \
  --name board-3 --labels rack=b,board=rk3588 > "$tmp/out" || fail "install: $(cat "$tmp/out")"
[ -x "$r/usr/local/bin/fleetmark-agent" ] && [ -x "$r/usr/local/bin/fleetmark" ] || fail "binaries"
cmp -s "$r/usr/local/bin/fleetmark-agent" "$agent_bin" || fail "installed agent differs"
[ -f "$r/usr/local/share/fleetmark/plans/nightly.txtpb" ] || fail "plans"
[ "$(stat -c %a "$r/etc/fleetmark/enrollment_token")" = 600 ] || fail "token mode"
[ "$(cat "$r/etc/fleetmark/enrollment_token")" = fm_secret_token ] || fail "token content"
grep -qx "COORDINATOR=10.0.0.5:7443" "$r/etc/fleetmark/agent.env" || fail "env: $(cat "$r/etc/fleetmark/agent.env")"
grep -qx "AGENT_NAME=board-3" "$r/etc/fleetmark/agent.env" || fail "env name"
grep -qx "LABELS=rack=b,board=rk3588" "$r/etc/fleetmark/agent.env" || fail "env labels"
cmp -s "$r/etc/systemd/system/fleetmark-agent.service" "$repo/deploy/systemd/fleetmark-agent.service" || fail "unit"
[ "$(cat "$tmp/systemctl.log")" = "systemctl daemon-reload
systemctl enable --now fleetmark-agent" ] || fail "systemctl calls: $(cat "$tmp/systemctl.log")"
# The unit's variables are the ones agent.env sets.
for v in COORDINATOR AGENT_NAME LABELS TLS_ARGS; do
  grep -q "\${\?$v}\?" "$r/etc/systemd/system/fleetmark-agent.service" || fail "unit does not use $v"
done
ok "install with systemd"

# Bad input: one clear error, exit 2, nothing installed.
code=0
install_ --root "$tmp/bad" --systemd yes --coordinator 10.0.0.5:7443 --name 'two words' 2> "$tmp/err" || code=$?
[ "$code" -eq 2 ] && grep -q 'no spaces' "$tmp/err" && [ ! -e "$tmp/bad/usr" ] || fail "bad name: $code $(cat "$tmp/err")"
code=0
install_ --root "$tmp/bad" --systemd maybe --coordinator x 2> "$tmp/err" || code=$?
[ "$code" -eq 2 ] && grep -q -- '--systemd: auto, yes or no, got "maybe"' "$tmp/err" || fail "bad --systemd"
ok "bad input"

# Without systemd: the printed command line runs the installed agent.
r2=$tmp/root2
install_ --root "$r2" --systemd no --coordinator 127.0.0.1:9 --token fm_other --name host-1 > "$tmp/out" ||
  fail "install (no systemd): $(cat "$tmp/out")"
grep -q "no systemd here: run it with" "$tmp/out" || fail "no command line printed: $(cat "$tmp/out")"
line=$(sed -n 's/^  //p' "$tmp/out")
[[ "$line" == "$r2/usr/local/bin/fleetmark-agent --coordinator=127.0.0.1:9 --name=host-1 --token_file=$r2/etc/fleetmark/enrollment_token --spool_dir=$r2/var/lib/fleetmark-agent" ]] ||
  fail "command line: $line"
[ "$(cat "$r2/etc/fleetmark/enrollment_token")" = fm_other ] || fail "--token not written"
[ ! -e "$r2/etc/systemd/system/fleetmark-agent.service" ] || fail "unit installed without systemd"
# shellcheck disable=SC2086
$line > "$tmp/agent.log" 2>&1 &
agent_pid=$!
for _ in $(seq 1 50); do grep -q 'dialing 127.0.0.1:9' "$tmp/agent.log" && break; sleep 0.2; done
grep -q '"host-1" dialing 127.0.0.1:9' "$tmp/agent.log" || fail "agent from the printed line: $(cat "$tmp/agent.log")"
kill "$agent_pid"
wait "$agent_pid" 2>/dev/null || true
agent_pid=""
ok "no systemd: printed command line works"

# Uninstall: service disabled, files gone, spool kept; --purge removes it.
: > "$tmp/systemctl.log"
echo "unacknowledged" > "$r/var/lib/fleetmark-agent/spool-marker"
install_ --root "$r" --systemd yes --uninstall > "$tmp/out" || fail "uninstall"
grep -qx "systemctl disable --now fleetmark-agent" "$tmp/systemctl.log" || fail "not disabled: $(cat "$tmp/systemctl.log")"
for f in usr/local/bin/fleetmark-agent usr/local/bin/fleetmark etc/fleetmark/agent.env \
         etc/fleetmark/enrollment_token etc/systemd/system/fleetmark-agent.service; do
  [ ! -e "$r/$f" ] || fail "$f left after --uninstall"
done
[ -f "$r/var/lib/fleetmark-agent/spool-marker" ] || fail "spool removed without --purge"
install_ --root "$r" --systemd yes --uninstall --purge > /dev/null || fail "purge"
[ ! -e "$r/var/lib/fleetmark-agent" ] || fail "spool left after --purge"
ok "uninstall"

echo "$pass passed, 0 failed"
