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
[ "$code" -eq 2 ] && grep -q -- '--name: 1-64 characters' "$tmp/err" && [ ! -e "$tmp/bad/usr" ] || fail "bad name: $code $(cat "$tmp/err")"
code=0
install_ --root "$tmp/bad" --systemd maybe --coordinator x 2> "$tmp/err" || code=$?
[ "$code" -eq 2 ] && grep -q -- '--systemd: auto, yes or no, got "maybe"' "$tmp/err" || fail "bad --systemd"
# expect_bad PATTERN ARGS...: exit 2, PATTERN (fixed string) on stderr, no raw control
# character echoed, nothing installed below $tmp/bad.
esc=$'\x1b'
expect_bad() {
  local pattern=$1 code=0
  shift
  install_ "$@" > "$tmp/out" 2> "$tmp/err" || code=$?
  [ "$code" -eq 2 ] && grep -qF -- "$pattern" "$tmp/err" || fail "$*: exit $code, $(cat "$tmp/err" "$tmp/out")"
  if grep -q "$esc" "$tmp/err" "$tmp/out"; then fail "$*: raw ESC echoed: $(od -c "$tmp/err")"; fi
  [ ! -e "$tmp/bad/usr" ] && [ ! -e "$tmp/bad/etc" ] || fail "$*: installed something"
}
common=(--systemd no --coordinator 10.0.0.5:7443 --token_file "$tmp/token")
expect_bad 'unknown flag --bogus' --root "$tmp/bad" "${common[@]}" --bogus x
expect_bad 'unknown flag --bogus' --root "$tmp/bad" "${common[@]}" --bogus
expect_bad '--labels: key=value' --root "$tmp/bad" "${common[@]}" --labels 'k=v;x'
expect_bad '--labels: key=value' --root "$tmp/bad" "${common[@]}" --labels 'k=v,'
expect_bad '--name: 1-64 characters' --root "$tmp/bad" "${common[@]}" --name $'a\x1b[31m'
grep -qF "\$'a\\E[31m'" "$tmp/err" || fail "hostile name not shown escaped: $(cat "$tmp/err")"
expect_bad '--coordinator: HOST:PORT' --root "$tmp/bad" "${common[@]}" --coordinator 'h:0'
# An empty --root is not /. (A missing --dist too, so that without the check nothing
# reaches the real system either.)
expect_bad '--root: must not be empty' --root '' "${common[@]}" --dist "$tmp/no-such-dist"
ok "bad input"

# Architecture: a tarball (by its name, or by `file` on its agent) of another
# architecture than this machine's is refused naming both; --arch (only with --root)
# installs it with a warning.
case "$arch" in arm64) other=x86_64 machine_byte='\x3e' ;; *) other=arm64 machine_byte='\xb7' ;; esac
oname=fleetmark-0.0.0-linux-$other
mkdir -p "$tmp/ostage/$oname" "$tmp/odist" "$tmp/fstage/$name"
cp "$agent_bin" "$tmp/ostage/$oname/fleetmark-agent"
tar -C "$tmp/ostage" -czf "$tmp/odist/$oname.tar.gz" "$oname"
expect_bad "$oname.tar.gz is $other, this machine is $arch" --root "$tmp/bad" "${common[@]}" --dist "$tmp/odist/$oname.tar.gz"
expect_bad "--arch $other: this machine is $arch; another architecture only with --root" "${common[@]}" \
  --arch "$other" --dist "$tmp/no-such-dist"
expect_bad "its fleetmark-agent is a $arch executable, but --arch is $other" --root "$tmp/bad" "${common[@]}" \
  --arch "$other" --dist "$tmp/odist/$oname.tar.gz"
# A (header-only) ELF of the other machine in a tarball named for this one.
{ printf "\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00${machine_byte}\x00\x01\x00\x00\x00"
  head -c 42 /dev/zero; } > "$tmp/fstage/$name/fleetmark-agent"
chmod +x "$tmp/fstage/$name/fleetmark-agent"
mkdir -p "$tmp/fdist"
tar -C "$tmp/fstage" -czf "$tmp/fdist/$name.tar.gz" "$name"
expect_bad "its fleetmark-agent is a $other executable, this machine is $arch" --root "$tmp/bad" "${common[@]}" \
  --dist "$tmp/fdist/$name.tar.gz"
mkdir -p "$tmp/ostage2/$oname"
cp "$tmp/fstage/$name/fleetmark-agent" "$tmp/ostage2/$oname/"
tar -C "$tmp/ostage2" -czf "$tmp/odist/$oname.tar.gz" "$oname"
install_ --root "$tmp/image" "${common[@]}" --arch "$other" --dist "$tmp/odist/$oname.tar.gz" > "$tmp/out" 2> "$tmp/err" ||
  fail "--arch $other --root: $(cat "$tmp/err")"
grep -qF "warning: installing $other binaries below $tmp/image on a $arch machine" "$tmp/err" || fail "no warning: $(cat "$tmp/err")"
cmp -s "$tmp/image/usr/local/bin/fleetmark-agent" "$tmp/fstage/$name/fleetmark-agent" || fail "--arch: not installed"
ok "architecture checks"

# The printed command line is shell-quoted: a root with a space stays one word.
r3="$tmp/root 3"
install_ --root "$r3" "${common[@]}" --name host-3 > "$tmp/out" || fail "install in '$r3': $(cat "$tmp/out")"
line=$(sed -n 's/^  //p' "$tmp/out")
eval "set -- $line"
[ "$1" = "$r3/usr/local/bin/fleetmark-agent" ] && [ "$4" = "--token_file=$r3/etc/fleetmark/enrollment_token" ] ||
  fail "command line not quoted: $line"
set --
ok "printed command line quoted"

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
eval "set -- $line"
"$@" > "$tmp/agent.log" 2>&1 &
set --
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
