#!/usr/bin/env bash
# Installs fleetmark's dependencies on Debian 12 (run as root), by profile:
#   deploy/install-deps.sh run    # build and run the product (deploy/quickstart.sh)
#   deploy/install-deps.sh dist   # run + the device builds' cross toolchains (deploy/dist.sh)
#   deploy/install-deps.sh test   # dist + what the test suite uses (deploy/test.sh)
#   deploy/install-deps.sh PROFILE --list   # print PROFILE's packages, install nothing
# Each package is listed once, in the one profile that first needs it; a larger
# profile includes the smaller ones. Idempotent: only missing packages are installed
# (a no-op when everything is there, also without root). Node.js/npm come from Debian
# unless a node is already on PATH. Nothing is removed.
# Exit codes: 0 installed (or nothing to do); 1 failed or not root; 2 usage.
set -euo pipefail
# shellcheck source=deploy/lib/args.sh
. "$(dirname "$0")/lib/args.sh"
case "${1:-}" in -h|--help) sed -n '2,/^# Exit codes/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
usage="usage: deploy/install-deps.sh run|dist|test [--list] (--help explains)"
if [ $# -lt 1 ] || [ $# -gt 2 ] || { [ $# -eq 2 ] && [ "$2" != --list ]; }; then echo "$usage" >&2; exit 2; fi
profile=$1
case "$profile" in
  run|dist|test) ;;
  *) echo "install-deps: PROFILE must be run, dist or test (got $(shown "$profile"))" >&2; exit 2 ;;
esac

# run: the compiler, the build tools and the libraries of every product target, the
# PostgreSQL server the quickstart's stack runs (deploy/pg.sh), the tools deploy/stack.sh
# calls (python3 for a free port, procps, util-linux's runuser/flock/setsid). GoogleTest
# is here because configuring the project (tests/CMakeLists.txt) requires it.
run_packages=(
  build-essential cmake ninja-build pkg-config ccache git
  protobuf-compiler libprotobuf-dev protobuf-compiler-grpc libgrpc++-dev
  libabsl-dev libtbb-dev libboost-fiber-dev libboost-context-dev libboost-system-dev
  libboost-dev libhwloc-dev hwloc nlohmann-json3-dev libcpp-httplib-dev
  libpqxx-dev libpq-dev postgresql-15 postgresql-client-15
  libre2-dev libgtest-dev libgmock-dev python3 procps util-linux
)
# dist: device builds (deploy/dist.sh): cross compilers, qemu-user to run their binaries,
# file/dpkg-dev to check and unpack them. The arm64/armhf -dev packages are unpacked
# by deploy/cross-deps.sh, never installed (that would upgrade amd64 libraries).
dist_packages=(
  crossbuild-essential-arm64 crossbuild-essential-armhf qemu-user-static file dpkg-dev
)
# test: benchmarks and statistics references, the browser test's Chromium, the topology
# fixtures' bzip2, TLS test certificates (openssl), iproute2, clang-format.
test_packages=(
  libbenchmark-dev libbenchmark-tools python3-scipy
  # python3-jsonschema validates exported results against docs/results-schema.json in the tests.
  python3-jsonschema
  chromium bzip2 iproute2 openssl
  # promtool (`promtool check metrics`) parses the coordinator's /metrics in the tests.
  prometheus
  # deploy/package.sh's Debian packages: lintian checks them in the tests.
  lintian
  # tests/style: the tree is as clang-format (14, .clang-format) leaves it.
  clang-format
)
packages=("${run_packages[@]}")
[ "$profile" = run ] || packages+=("${dist_packages[@]}")
[ "$profile" != test ] || packages+=("${test_packages[@]}")
command -v node >/dev/null 2>&1 || packages+=(nodejs npm)
if [ $# -eq 2 ]; then printf '%s\n' "${packages[@]}"; exit 0; fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# dist and test: deploy/cross-deps.sh needs the arm64/armhf package lists (apt-get
# download) and Debian's source lists (apt-get source onetbb): the foreign architectures
# are added and a deb-src twin of each deb822 source written (same archives, Types:
# deb-src). The run profile leaves the machine's apt configuration as it is.
src_list=/etc/apt/sources.list.d/fleetmark-deb-src.sources
apt_setup=()
if [ "$profile" != run ]; then
  for a in arm64 armhf; do
    dpkg --print-foreign-architectures | grep -x "$a" >/dev/null || apt_setup+=("architecture $a")
  done
  [ -f "$src_list" ] || apt_setup+=("deb-src lists")
fi

if ((${#missing[@]} + ${#apt_setup[@]})); then
  echo "install-deps($profile): installing ${missing[*]} ${apt_setup[*]}" >&2
  if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps($profile): missing packages and not root; run as root: $0 $profile" >&2
    exit 1
  fi
  if [ "$profile" != run ]; then
    for a in arm64 armhf; do dpkg --add-architecture "$a"; done
    if [ ! -f "$src_list" ]; then
      { echo "# Written by fleetmark deploy/install-deps.sh: source packages (oneTBB)."
        cat /etc/apt/sources.list.d/*.sources 2>/dev/null | sed 's/^Types: deb$/Types: deb-src/'
      } > "$src_list.tmp" && mv "$src_list.tmp" "$src_list"
      if [ -f /etc/apt/sources.list ]; then
        sed -n 's/^deb /deb-src /p' /etc/apt/sources.list > /etc/apt/sources.list.d/fleetmark-deb-src.list
      fi
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  # A mirror mid-sync serves an index whose size does not match its Release file
  # ("File has unexpected size ... Mirror sync in progress?"), and apt-get update exits
  # 100 although every other list was fetched. Retry a few times, then go on with the
  # lists it has: the install below fails by itself, naming the package, if one is
  # really missing.
  for attempt in 1 2 3; do
    apt-get update -qq && break
    if [ "$attempt" -eq 3 ]; then
      echo "install-deps: apt-get update failed 3 times; going on with the package lists it has" >&2
    else
      sleep $((attempt * 10))
    fi
  done
  ((${#missing[@]} == 0)) || apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
