# Shared by deploy/android.sh and deploy/install-agent.sh (sourced): finding the agent
# and CLI binaries of one architecture in a dist tarball (deploy/dist.sh ARCH writes
# dist/fleetmark-VERSION-linux-ARCH.tar.gz holding fleetmark-VERSION-linux-ARCH/
# {fleetmark-agent, fleetmark, plans/, README}).

# Prints the folder holding fleetmark-agent and fleetmark for ARCH (arm64, armhf,
# x86_64). DIST is a tarball, a folder of tarballs (the newest
# fleetmark-*-linux-ARCH.tar.gz is taken) or an unpacked folder; tarballs are unpacked
# into WORK. Exits 1 with a message naming what is missing.
dist_binaries() {
  local arch=$1 dist=$2 work=$3 tarball=""
  if [ -d "$dist" ] && [ -x "$dist/fleetmark-agent" ]; then
    echo "$dist"
    return
  fi
  if [ -d "$dist" ]; then
    tarball=$(ls -t "$dist"/fleetmark-*-linux-"$arch".tar.gz 2>/dev/null | head -n 1 || true)
    if [ -z "$tarball" ]; then
      echo "no $dist/fleetmark-*-linux-$arch.tar.gz (build it: deploy/dist.sh $arch)" >&2
      exit 1
    fi
  elif [ -f "$dist" ]; then
    tarball=$dist
  else
    echo "--dist: no tarball or folder at $dist" >&2
    exit 1
  fi
  if ! tar -xzf "$tarball" -C "$work"; then
    echo "cannot unpack $tarball" >&2
    exit 1
  fi
  local agent
  agent=$(find "$work" -name fleetmark-agent -type f | head -n 1)
  if [ -z "$agent" ]; then
    echo "$tarball holds no fleetmark-agent" >&2
    exit 1
  fi
  dirname "$agent"
}

# A word for sh: itself if it holds only characters sh takes literally, else
# single-quoted (a ' inside as '\'').
sh_quote() {
  if [[ "$1" =~ ^[A-Za-z0-9._/:=,+@%-]+$ ]]; then printf '%s' "$1"; return; fi
  printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"
}
