#!/usr/bin/env bash
# Prepares the dependency root of a device build and prints its path:
#   deploy/cross-deps.sh ARCH        (ARCH = x86_64, arm64, armhf)
#
# arm64/armhf: Debian 12's own -dev packages of that architecture (static archives,
# headers, CMake files) are fetched with `apt-get download` and unpacked into the root.
# They are deliberately not installed with dpkg: those packages are Multi-Arch: same,
# so dpkg requires the amd64 copy at the same version, and apt upgrades amd64 libssl3,
# zlib1g, krb5, ... to reach it (the amd64 versions the product builds against would
# change, and every engineer's ccache would miss). libpq is never among them.
# All arches: oneTBB built as a static library from Debian's own source package
# (`apt-get source onetbb`; Debian ships no libtbb.a), without hwloc (tbbbind).
#
# The root is cached in $FLEETMARK_CROSS_CACHE (default /var/cache/fleetmark-cross),
# keyed by the package versions; a second call is a no-op. Needs the tools that
# `deploy/install-deps.sh dist` installs (cross compilers, the foreign apt lists, deb-src).
set -euo pipefail
arch=${1:?usage: deploy/cross-deps.sh x86_64|arm64|armhf}
here=$(cd "$(dirname "$0")" && pwd)
case "$arch" in
  x86_64) triple=x86_64-linux-gnu debarch=amd64 toolchain=x86_64-linux-gnu ;;
  arm64) triple=aarch64-linux-gnu debarch=arm64 toolchain=aarch64-linux-gnu ;;
  armhf) triple=arm-linux-gnueabihf debarch=armhf toolchain=arm-linux-gnueabihf ;;
  *) echo "cross-deps: ARCH must be x86_64, arm64 or armhf (got '$arch')" >&2; exit 2 ;;
esac
cache=${FLEETMARK_CROSS_CACHE:-/var/cache/fleetmark-cross}
log() { echo "cross-deps($arch): $*" >&2; }

# The -dev packages the agent and the local CLI link (gRPC, protobuf, Abseil, Boost
# fiber/context, zlib and what they need), closed over their dependencies below.
dev_packages=(libgrpc++-dev libprotobuf-dev libabsl-dev libboost-fiber1.74-dev
              libboost-context1.74-dev libboost-system1.74-dev zlib1g-dev)
# Of the closure, only these source families are unpacked (glibc, libstdc++, the
# kernel headers come with the cross compiler; krb5/tirpc are not linked).
keep='^(libabsl|libboost|libc-ares|libgrpc|libprotobuf|libprotoc|libre2|libssl|zlib1g)'

closure() {
  apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
    --no-replaces --no-enhances --no-pre-depends "${dev_packages[@]/%/:$debarch}" 2>/dev/null |
    grep -v '^[ <]' | grep ":$debarch\$" | sed "s/:$debarch\$//" | grep -E "$keep" | sort -u
}

packages=()
if [ "$arch" != x86_64 ]; then mapfile -t packages < <(closure); fi
tbb_version=$(apt-cache showsrc onetbb 2>/dev/null | sed -n 's/^Version: //p' | sort -V | tail -1)
[ -n "$tbb_version" ] || { log "no onetbb source package: run deploy/install-deps.sh dist (deb-src)"; exit 1; }
# The cache key: this recipe's number (bump it when the steps below change) and the
# versions of oneTBB's source and of every package unpacked.
recipe=1
key=$( { echo "recipe $recipe tbb $tbb_version"
         if ((${#packages[@]})); then
           apt-cache show --no-all-versions "${packages[@]/%/:$debarch}" nlohmann-json3-dev |
             grep -E '^(Package|Version):'
         fi; } | sha256sum | cut -c1-16)
root="$cache/$arch-$key"
if [ -f "$root/.complete" ]; then echo "$root"; exit 0; fi

rm -rf "$root" && mkdir -p "$root/debs" "$root/src"
if ((${#packages[@]})); then
  log "downloading ${#packages[@]} Debian packages"
  # nlohmann-json is header-only (Architecture: all).
  (cd "$root/debs" && apt-get download -qq "${packages[@]/%/:$debarch}" nlohmann-json3-dev 2>&1 |
     grep -v 'unsandboxed' >&2 || true)
  for deb in "$root"/debs/*.deb; do dpkg-deb -x "$deb" "$root"; done
  # gRPC's CMake files import grpc_cpp_plugin and friends; the build runs the host's.
  mkdir -p "$root/usr/bin"
  for tool in grpc_cpp_plugin protoc; do ln -sf "/usr/bin/$tool" "$root/usr/bin/$tool"; done
  for tool in /usr/bin/grpc_*_plugin; do ln -sf "$tool" "$root/usr/bin/"; done
fi

log "building static oneTBB $tbb_version from Debian's source"
(cd "$root/src" && apt-get source -qq "onetbb=$tbb_version" 2>&1 | grep -v 'unsandboxed' >&2 || true)
tbb_src=$(find "$root/src" -maxdepth 1 -type d -name 'onetbb-*' | head -1)
[ -d "$tbb_src" ] || { log "apt-get source onetbb failed"; exit 1; }
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
FLEETMARK_DEPS_ROOT=$root cmake -S "$tbb_src" -B "$root/tbb-build" -G Ninja \
  -DCMAKE_TOOLCHAIN_FILE="$here/toolchains/$toolchain.cmake" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX="$root/usr" -DCMAKE_INSTALL_LIBDIR="lib/$triple" \
  -DBUILD_SHARED_LIBS=OFF -DTBB_TEST=OFF -DTBB_EXAMPLES=OFF -DTBB_STRICT=OFF \
  -DTBBMALLOC_BUILD=OFF -DTBB_DISABLE_HWLOC_AUTOMATIC_SEARCH=ON "${launcher[@]}" >/dev/null
ninja -C "$root/tbb-build" -j"${FLEETMARK_JOBS:-2}" install >/dev/null
rm -rf "$root/tbb-build" "$root/src" "$root/debs"
touch "$root/.complete"
log "ready"
echo "$root"
