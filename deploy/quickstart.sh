#!/usr/bin/env bash
# fleetmark quickstart on a fresh Debian 12 machine (run as root): installs
# dependencies, builds, and runs the S1 framework study with quick settings,
# printing the results table.
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/install-deps.sh
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C build/release -j"$(nproc)" fleetmark
build/release/coordinator/cli/fleetmark run plans/s1-frameworks.txtpb --quick
