#!/bin/sh
# Runs a command inside an empty root, as a device with nothing installed would:
#   tests/device/empty_root.sh ROOT COMMAND [ARGS...]
# In a new mount namespace (unshare), bind-mounts only /proc, /sys, /dev/null and
# /dev/urandom into ROOT and chroots there; COMMAND is a path inside ROOT (e.g.
# /qemu-aarch64-static /fleetmark-agent ...). ROOT has no /etc, no libraries, no shell.
# The mounts vanish with the namespace when COMMAND exits; exec keeps one process, so a
# signal to this script's pid reaches COMMAND. Needs root (CAP_SYS_ADMIN, CAP_SYS_CHROOT).
set -eu
[ $# -ge 2 ] || { echo "usage: $0 ROOT COMMAND [ARGS...]" >&2; exit 2; }
root=$1
[ -d "$root" ] || { echo "empty_root: $root is not a directory" >&2; exit 2; }
exec unshare --mount --propagation private -- /bin/sh -c '
  set -eu
  r=$1; shift
  for d in proc sys; do mkdir -p "$r/$d"; mount --rbind "/$d" "$r/$d"; done
  mkdir -p "$r/dev"
  for f in null urandom; do
    [ -e "$r/dev/$f" ] || : > "$r/dev/$f"
    mount --bind "/dev/$f" "$r/dev/$f"
  done
  exec chroot "$r" "$@"' empty_root "$@"
