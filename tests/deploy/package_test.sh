#!/usr/bin/env bash
# deploy/package.sh on this build: two Debian packages whose control fields, files and
# dependencies are right; unpacked together into a scratch root (dpkg-deb -x) each
# binary prints its version from there; the units start the packaged binaries; lintian
# reports no error; the unpacked coordinator serves its web view from the package's
# /usr/share/fleetmark/web (needs PostgreSQL: FLEETMARK_TEST_PG_URI).
#   package_test.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d)
coordinator_pid=""
db=""
cleanup() {
  if [ -n "$coordinator_pid" ]; then
    kill "$coordinator_pid" 2>/dev/null || true
    wait "$coordinator_pid" 2>/dev/null || true
  fi
  [ -z "$db" ] || psql -q "$FLEETMARK_TEST_PG_URI" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
pass=0
ok() { echo "ok: $*"; pass=$((pass + 1)); }

version=$(sed -n 's/^project(fleetmark VERSION \([0-9.]*\).*/\1/p' "$repo/CMakeLists.txt")
arch=$(dpkg --print-architecture)
"$repo/deploy/package.sh" "$build" "$tmp/out" > "$tmp/paths" || fail "deploy/package.sh exited $?"
agent_deb=$tmp/out/fleetmark-agent_${version}_${arch}.deb
coordinator_deb=$tmp/out/fleetmark-coordinator_${version}_${arch}.deb
for deb in "$agent_deb" "$coordinator_deb"; do
  grep -qxF "$deb" "$tmp/paths" || fail "package.sh did not print $deb: $(cat "$tmp/paths")"
  [ -s "$deb" ] || fail "$deb is missing"
done
ok "two packages: $(basename "$agent_deb") $(basename "$coordinator_deb")"

# Control fields: name, version, architecture, a description, and shared-library
# dependencies from dpkg-shlibdeps (the binaries are dynamic: libc6 and gRPC at least).
for deb in "$agent_deb" "$coordinator_deb"; do
  package=$(dpkg-deb -f "$deb" Package)
  [ "$(dpkg-deb -f "$deb" Version)" = "$version" ] || fail "$package: Version is not $version"
  [ "$(dpkg-deb -f "$deb" Architecture)" = "$arch" ] || fail "$package: Architecture is not $arch"
  depends=$(dpkg-deb -f "$deb" Depends)
  case "$depends" in *libc6*) ;; *) fail "$package: Depends lacks libc6: '$depends'" ;; esac
  case "$depends" in *libgrpc*) ;; *) fail "$package: Depends lacks gRPC: '$depends'" ;; esac
  [ -n "$(dpkg-deb -f "$deb" Description)" ] || fail "$package: no Description"
done
case "$(dpkg-deb -f "$coordinator_deb" Depends)" in *libpq*) ;; *) fail "coordinator: Depends lacks libpq" ;; esac
case "$(dpkg-deb -f "$agent_deb" Depends)" in *libpq*) fail "agent: Depends on libpq (it must not link it)" ;; esac
ok "control fields and shared-library dependencies"

# Files of each package.
dpkg-deb -c "$agent_deb" | awk '{print $6}' > "$tmp/agent.files"
dpkg-deb -c "$coordinator_deb" | awk '{print $6}' > "$tmp/coordinator.files"
for f in ./usr/bin/fleetmark-agent ./lib/systemd/system/fleetmark-agent.service \
         ./usr/share/doc/fleetmark-agent/examples/agent.env ./usr/share/doc/fleetmark-agent/copyright \
         ./usr/share/doc/fleetmark-agent/changelog.gz ./usr/share/fleetmark-agent/plans/nightly.txtpb; do
  grep -qxF "$f" "$tmp/agent.files" || fail "agent package lacks $f"
done
for f in ./usr/bin/fleetmark-coordinator ./usr/bin/fleetmark ./lib/systemd/system/fleetmark-coordinator.service \
         ./usr/share/doc/fleetmark-coordinator/examples/coordinator.env ./usr/share/doc/fleetmark-coordinator/copyright \
         ./usr/share/fleetmark/web/index.html ./usr/share/fleetmark/web/assets/app.js \
         ./usr/share/fleetmark/plans/s1-frameworks.txtpb; do
  grep -qxF "$f" "$tmp/coordinator.files" || fail "coordinator package lacks $f"
done
if grep -xF ./usr/bin/fleetmark "$tmp/agent.files" >/dev/null; then fail "both packages ship /usr/bin/fleetmark"; fi
# Together installable: no path is in both packages (dpkg refuses overwrites).
both=$(sort "$tmp/agent.files" "$tmp/coordinator.files" | grep -v '/$' | uniq -d)
[ -z "$both" ] || fail "files in both packages: $both"
ok "files: binaries, units, example env files, plans, web view; no file in both"

# Unpacked into one scratch root, every binary runs from there and names its version.
root=$tmp/root
dpkg-deb -x "$agent_deb" "$root"
dpkg-deb -x "$coordinator_deb" "$root"
for bin in fleetmark-agent fleetmark-coordinator fleetmark; do
  out=$("$root/usr/bin/$bin" --version) || fail "$bin --version exited $?"
  case "$out" in "$bin $version "*) ;; *) fail "$bin --version printed: $out" ;; esac
  if file "$root/usr/bin/$bin" | grep -q 'not stripped'; then fail "$bin is not stripped"; fi
done
ok "--version of the unpacked fleetmark-agent, fleetmark-coordinator and fleetmark"

# The units start the packaged binaries (/usr/bin), not /usr/local ones.
for unit in fleetmark-agent fleetmark-coordinator; do
  exec_line=$(grep '^ExecStart=' "$root/lib/systemd/system/$unit.service")
  case "$exec_line" in "ExecStart=/usr/bin/$unit "*) ;; *) fail "$unit.service: $exec_line" ;; esac
  if grep -q '/usr/local/' "$root/lib/systemd/system/$unit.service"; then fail "$unit.service names /usr/local/"; fi
done
grep -q '^COORDINATOR=' "$root/usr/share/doc/fleetmark-agent/examples/agent.env" || fail "agent.env example lacks COORDINATOR"
grep -q '^DATABASE_URI=' "$root/usr/share/doc/fleetmark-coordinator/examples/coordinator.env" ||
  fail "coordinator.env example lacks DATABASE_URI"
ok "units start /usr/bin binaries; example env files name their variables"

# lintian: no error (warnings such as a missing manual page are printed, not fatal).
command -v lintian >/dev/null || fail "lintian is missing (deploy/install-deps.sh test installs it)"
for deb in "$agent_deb" "$coordinator_deb"; do
  if ! lintian --fail-on error --no-tag-display-limit "$deb" > "$tmp/lintian.log" 2>&1; then
    cat "$tmp/lintian.log" >&2
    fail "lintian reports errors on $(basename "$deb")"
  fi
  grep -q '^E: ' "$tmp/lintian.log" && { cat "$tmp/lintian.log" >&2; fail "lintian error lines"; }
  echo "lintian $(basename "$deb"): $(grep -c '^W: ' "$tmp/lintian.log" || true) warnings"
done
ok "lintian: no errors"

# The unpacked coordinator finds its web view next to itself (../share/fleetmark/web).
if [ -z "${FLEETMARK_TEST_PG_URI:-}" ]; then
  [ -z "${FLEETMARK_TEST_REQUIRE_PG:-}" ] || fail "FLEETMARK_TEST_PG_URI is not set"
  echo "passed $pass checks (web view check needs FLEETMARK_TEST_PG_URI)"
  exit 0
fi
db=fmtest_pkg_$$_$RANDOM
psql -q "$FLEETMARK_TEST_PG_URI" -c "CREATE DATABASE $db" >/dev/null
uri=${FLEETMARK_TEST_PG_URI%/*}/$db
echo "admin_$RANDOM$RANDOM$RANDOM" > "$tmp/admin_token"
echo "enroll_$RANDOM$RANDOM$RANDOM" > "$tmp/enrollment_token"
chmod 600 "$tmp/admin_token" "$tmp/enrollment_token"
"$root/usr/bin/fleetmark-coordinator" --database_uri="$uri" --listen_address=127.0.0.1:0 \
  --http_address=127.0.0.1:0 --admin_token_file="$tmp/admin_token" \
  --enrollment_token_file="$tmp/enrollment_token" > "$tmp/coordinator.log" 2>&1 &
coordinator_pid=$!
url=""
for _ in $(seq 1 300); do
  url=$(sed -n 's/.*web view at \(http:[^ ]*\).*/\1/p' "$tmp/coordinator.log" | head -1)
  [ -n "$url" ] && break
  kill -0 "$coordinator_pid" 2>/dev/null || { cat "$tmp/coordinator.log" >&2; fail "the coordinator exited"; }
  sleep 0.1
done
[ -n "$url" ] || { cat "$tmp/coordinator.log" >&2; fail "no 'web view at' line in 30 s"; }
grep -qF "(files from $root/usr/share/fleetmark/web)" "$tmp/coordinator.log" ||
  { grep 'web view at' "$tmp/coordinator.log" >&2; fail "the web view is not served from the package"; }
curl -fsS "$url" -o "$tmp/index.html" || fail "GET $url failed"
cmp -s "$tmp/index.html" "$root/usr/share/fleetmark/web/index.html" || fail "GET / is not the packaged index.html"
ok "the unpacked coordinator serves the packaged web view"
echo "passed $pass checks"
