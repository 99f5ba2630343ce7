#!/usr/bin/env bash
# Installs fleetmark's build, test and run dependencies on Debian 12 (run as root).
# Idempotent: only missing packages are installed. Node.js/npm come from Debian
# unless a node is already on PATH.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config ccache git
  protobuf-compiler libprotobuf-dev protobuf-compiler-grpc libgrpc++-dev
  libabsl-dev libtbb-dev libboost-fiber-dev libboost-context-dev libboost-system-dev
  libboost-dev libhwloc-dev hwloc nlohmann-json3-dev libcpp-httplib-dev
  libpqxx-dev libpq-dev postgresql-15 postgresql-client-15
  libre2-dev libgtest-dev libgmock-dev libbenchmark-dev libbenchmark-tools python3-scipy
  # python3-jsonschema validates exported results against docs/results-schema.json in the tests.
  python3-jsonschema
  chromium bzip2 procps util-linux iproute2 openssl
  # promtool (`promtool check metrics`) parses the coordinator's /metrics in the tests.
  prometheus
  # deploy/package.sh's Debian packages: lintian checks them in the tests.
  lintian
  # Device builds (deploy/dist.sh): cross compilers, qemu-user to run their binaries,
  # file/dpkg-dev to check and unpack them. The arm64/armhf -dev packages are unpacked
  # by deploy/cross-deps.sh, never installed (that would upgrade amd64 libraries).
  crossbuild-essential-arm64 crossbuild-essential-armhf qemu-user-static file dpkg-dev
)
command -v node >/dev/null 2>&1 || packages+=(nodejs npm)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# deploy/cross-deps.sh needs the arm64/armhf package lists (apt-get download) and
# Debian's source lists (apt-get source onetbb): the foreign architectures are added
# and a deb-src twin of each deb822 source written (same archives, Types: deb-src).
src_list=/etc/apt/sources.list.d/fleetmark-deb-src.sources
apt_setup=()
for a in arm64 armhf; do
  dpkg --print-foreign-architectures | grep -x "$a" >/dev/null || apt_setup+=("architecture $a")
done
[ -f "$src_list" ] || apt_setup+=("deb-src lists")

if ((${#missing[@]} + ${#apt_setup[@]})); then
  echo "install-deps: installing ${missing[*]} ${apt_setup[*]}" >&2
  if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: missing packages and not root; run as root: $0" >&2
    exit 1
  fi
  for a in arm64 armhf; do dpkg --add-architecture "$a"; done
  if [ ! -f "$src_list" ]; then
    { echo "# Written by fleetmark deploy/install-deps.sh: source packages (oneTBB)."
      cat /etc/apt/sources.list.d/*.sources 2>/dev/null | sed 's/^Types: deb$/Types: deb-src/'
    } > "$src_list.tmp" && mv "$src_list.tmp" "$src_list"
    if [ -f /etc/apt/sources.list ]; then
      sed -n 's/^deb /deb-src /p' /etc/apt/sources.list > /etc/apt/sources.list.d/fleetmark-deb-src.list
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
