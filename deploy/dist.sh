#!/usr/bin/env bash
# Builds the self-contained device artifact of one architecture:
#   deploy/dist.sh ARCH      (ARCH = x86_64, arm64, armhf)
# -> dist/fleetmark-VERSION-linux-ARCH.tar.gz with fleetmark-agent and the fleetmark CLI
#    (static, stripped: they run in an empty root, no library or /etc needed), plans/ and
#    a README. Cross-compiles on Debian 12 with deploy/toolchains/*.cmake over the
#    dependency root of deploy/cross-deps.sh; build folder build/device-ARCH (ccache).
# Prints the tarball's path. FLEETMARK_JOBS (default 2) = ninja -j. Two runs of one
# ARCH take turns (flock on dist/.dist-ARCH.lock): the second waits, at most
# FLEETMARK_DIST_LOCK_TIMEOUT seconds (default: as long as it takes), else exits 1.
# Exit codes: 0 built; 1 failed; 2 usage.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
# shellcheck source=deploy/lib/args.sh
. "$root/deploy/lib/args.sh"
case "${1:-}" in -h|--help) sed -n '2,/^# Exit codes/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
if [ $# -ne 1 ]; then echo "usage: deploy/dist.sh x86_64|arm64|armhf" >&2; exit 2; fi
arch=$1
case "$arch" in
  x86_64) triple=x86_64-linux-gnu machine='x86-64' strip=strip ;;
  arm64) triple=aarch64-linux-gnu machine='ARM aarch64' strip=aarch64-linux-gnu-strip ;;
  armhf) triple=arm-linux-gnueabihf machine='ARM, EABI5' strip=arm-linux-gnueabihf-strip ;;
  *) echo "dist: ARCH must be x86_64, arm64 or armhf (got $(shown "$arch"))" >&2; exit 2 ;;
esac
# One run per ARCH at a time: they share build/device-ARCH and dist/NAME (rm -rf below).
mkdir -p dist
lock=dist/.dist-$arch.lock
exec 9>"$lock"
if ! flock -n 9; then
  echo "dist($arch): another deploy/dist.sh $arch is running (it holds $lock); waiting" >&2
  timeout=${FLEETMARK_DIST_LOCK_TIMEOUT:-}
  if ! flock ${timeout:+-w "$timeout"} 9; then
    echo "dist($arch): another deploy/dist.sh $arch is running (it holds $lock): gave up after $timeout s" >&2
    exit 1
  fi
fi
jobs=${FLEETMARK_JOBS:-2}
version=$(sed -n 's/^project(fleetmark VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)

# The cross compilers, qemu-user and apt lists deploy/cross-deps.sh needs (a no-op when
# installed; deploy/test.sh has installed them before it starts the device builds).
deploy/install-deps.sh dist
deps=$(deploy/cross-deps.sh "$arch")
build=build/device-$arch
echo "dist($arch): building in $build" >&2
# A unity build (CMAKE_UNITY_BUILD, batches of 8 sources per target): each header is
# parsed once per batch, less CPU for a folder that is built whole, rarely incrementally.
FLEETMARK_DEPS_ROOT=$deps cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_TOOLCHAIN_FILE="$root/deploy/toolchains/$triple.cmake" -DCMAKE_UNITY_BUILD=ON >/dev/null
FLEETMARK_DEPS_ROOT=$deps ninja -C "$build" -j"$jobs" fleetmark-agent fleetmark
# The openmp_* strategies link the compiler's static libgomp.a (the cross compilers'
# libgcc-12-dev-ARCH-cross ships it); a toolchain without one builds them as
# "unsupported: built without OpenMP", which is said here.
if grep -q '^FLEETMARK_HAVE_OPENMP:INTERNAL=1$' "$build/CMakeCache.txt"; then
  echo "dist($arch): openmp_* strategies: static libgomp.a of GCC $("$triple-gcc" -dumpfullversion 2>/dev/null || echo '(version unknown)')" >&2
else
  echo "dist($arch): openmp_* strategies: unsupported in this build (built without OpenMP: $triple-g++ -static -fopenmp failed, see $build/CMakeFiles/CMakeError.log)" >&2
fi

name=fleetmark-$version-linux-$arch
stage=dist/$name
rm -rf "$stage" && mkdir -p "$stage"
for bin in agent/fleetmark-agent coordinator/cli/fleetmark; do
  "$strip" -o "$stage/$(basename "$bin")" "$build/$bin"
  out=$(file -b "$stage/$(basename "$bin")")
  case "$out" in
    *"$machine"*"statically linked"*) ;;
    *) echo "dist($arch): $bin is not a static $machine executable: $out" >&2; exit 1 ;;
  esac
done
cp -r plans "$stage/plans"
cat > "$stage/README" <<EOF
fleetmark $version for Linux $arch ($triple): static executables, no libraries needed.

  ./fleetmark run plans/s1-frameworks.txtpb --quick   # a plan, no coordinator needed
  ./fleetmark-agent --coordinator=IP:PORT --token_file=token --spool_dir=./spool

--coordinator takes an IP literal (IP:PORT, [IPv6]:PORT) or a gRPC target; for a
host name on a device without /etc/resolv.conf name the DNS server:
dns://DNS_SERVER_IP/HOST:PORT (these static builds do not use NSS).
Boards with systemd: deploy/install-agent.sh; Android phones: deploy/android.sh
(docs/devices.md in the source tree).
EOF
tar -C dist -czf "dist/$name.tar.gz" "$name"
echo "dist($arch): $(du -h "dist/$name.tar.gz" | cut -f1) dist/$name.tar.gz" >&2
echo "$root/dist/$name.tar.gz"
