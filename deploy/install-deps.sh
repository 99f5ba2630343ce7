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
  chromium bzip2 procps util-linux iproute2 openssl
  crossbuild-essential-arm64 qemu-user-static
)
command -v node >/dev/null 2>&1 || packages+=(nodejs npm)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}" >&2
  if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: missing packages and not root; run as root: $0" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
