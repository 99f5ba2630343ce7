#!/usr/bin/env bash
# Builds the Debian packages of the host build (CPack DEB, cmake/packaging.cmake):
#   deploy/package.sh [BUILD_DIR [OUT_DIR]]   (default build/release, dist/deb)
# -> OUT_DIR/fleetmark-coordinator_VERSION_ARCH.deb (coordinator, fleetmark CLI, web view,
#    plans, systemd unit, example env) and OUT_DIR/fleetmark-agent_VERSION_ARCH.deb (agent,
#    plans, systemd unit, example env). Configures and builds BUILD_DIR (Release) first
#    when it has no CPack configuration or is out of date; FLEETMARK_JOBS (default 2) =
#    ninja -j. Prints the packages' paths. Install on a Debian 12 host with
#    `apt install ./fleetmark-agent_*.deb` (pulls the shared libraries it needs); nothing
#    is enabled: write /etc/fleetmark/*.env (examples in /usr/share/doc/PACKAGE/examples)
#    and the token files, then `systemctl enable --now fleetmark-agent`.
# Exit codes: 0 built; 1 failed; 2 usage.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
case "${1:-}" in -h|--help) sed -n '2,/^# Exit codes/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
if [ $# -gt 2 ]; then echo "usage: deploy/package.sh [BUILD_DIR [OUT_DIR]]" >&2; exit 2; fi
build=${1:-build/release}
out=${2:-dist/deb}
jobs=${FLEETMARK_JOBS:-2}
for tool in cpack dpkg-deb dpkg-shlibdeps; do
  command -v "$tool" >/dev/null || { echo "package: $tool is missing (run deploy/install-deps.sh run)" >&2; exit 1; }
done
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
ninja -C "$build" -j"$jobs" fleetmark-agent fleetmark-coordinator fleetmark fleetmark_web >/dev/null
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d "$out/.cpack.XXXXXX")
trap 'rm -rf "$work"' EXIT
if ! (cd "$build" && cpack -G DEB -B "$work" >"$work/cpack.log" 2>&1); then
  cat "$work/cpack.log" >&2
  echo "package: cpack failed in $build" >&2
  exit 1
fi
for deb in "$work"/*.deb; do
  mv -f "$deb" "$out/"
  echo "$out/$(basename "$deb")"
done
