#!/usr/bin/env bash
# Installs fleetmark-agent on a Linux board or host (run as root): unpacks the dist
# tarball for this machine's architecture, installs the agent and the fleetmark CLI to
# /usr/local/bin, writes /etc/fleetmark/agent.env and /etc/fleetmark/enrollment_token
# (0600), installs deploy/systemd/fleetmark-agent.service and enables it. Without
# systemd it prints the command line to run instead.
#
#   deploy/install-agent.sh --coordinator IP:PORT (--token_file FILE | --token TOKEN)
#        [--name NAME] [--labels k=v,...] [--tls_ca_file PEM] [--dist TARBALL|DIR]
#        [--root DIR [--arch x86_64|arm64|armhf]] [--systemd auto|yes|no] [--systemctl CMD]
#   deploy/install-agent.sh --uninstall [--purge] [--root DIR] [--systemd ...] [--systemctl CMD]
#
# --coordinator HOST:PORT, IP:PORT, [IPv6]:PORT or dns:///HOST:PORT; --name (default: the
# host name) [A-Za-z0-9._-]{1,64}; --labels key=value[,key=value] as the agent takes them.
# --dist: a tarball, a folder of them (default dist/; the one for the architecture), or
# an unpacked folder; a tarball or binary of another architecture than `uname -m` is
# refused (exit 2). --root installs below DIR instead of / (images, tests; not empty);
# with --root, --arch installs another architecture's tarball (a warning). --systemd auto
# (default) = /run/systemd/system exists. --systemctl: the command run for systemctl
# (tests pass a stand-in). --uninstall disables the service and removes the binaries,
# unit, agent.env and token; the spool (/var/lib/fleetmark-agent: results not yet
# acknowledged, the agent's credential) stays unless --purge.
# Exit codes: 0 done; 1 failed; 2 bad usage (the message names the flag).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=deploy/lib/dist.sh
. "$repo/deploy/lib/dist.sh"
# shellcheck source=deploy/lib/args.sh
. "$repo/deploy/lib/args.sh"

die() { echo "install-agent: $*" >&2; exit 1; }
bad() { echo "install-agent: $*" >&2; exit 2; }
arch_mismatch() {  # WHAT
  if [ "$arch" = "$machine" ]; then
    bad "--dist: $1, this machine is $machine (uname -m); with --root, --arch says so"
  fi
  bad "--dist: $1, but --arch is $arch"
}
# x86_64, arm64 or armhf for an ELF executable (`file`), or nothing if unknown.
binary_arch() {
  command -v file >/dev/null 2>&1 || return 0
  case "$(file -b "$1")" in
    *x86-64*) echo x86_64 ;; *"ARM aarch64"*) echo arm64 ;; *"ARM, EABI"*) echo armhf ;;
  esac
}

coordinator="" token_file="" token="" name="" labels="" tls_ca="" dist="$repo/dist"
root="" root_given=0 want_arch="" systemd=auto systemctl=systemctl uninstall=0 purge=0
while [ $# -gt 0 ]; do
  case "$1" in
    --uninstall) uninstall=1; shift; continue ;;
    --purge) purge=1; shift; continue ;;
    -h|--help) sed -n '8,/^# Exit codes/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --coordinator|--token_file|--token|--name|--labels|--tls_ca_file|--dist|--root|--arch|--systemd|--systemctl)
      [ $# -ge 2 ] || bad "$1 needs a value" ;;
    *) bad "unknown flag $(shown "$1") (--help lists them)" ;;
  esac
  case "$1" in
    --coordinator) coordinator=$2 ;;
    --token_file) token_file=$2 ;;
    --token) token=$2 ;;
    --name) name=$2 ;;
    --labels) labels=$2 ;;
    --tls_ca_file) tls_ca=$2 ;;
    --dist) dist=$2 ;;
    --root)
      [ -n "$2" ] || bad "--root: must not be empty (leave it out to install into /)"
      root=${2%/} root_given=1 ;;
    --arch) want_arch=$2 ;;
    --systemd) systemd=$2 ;;
    --systemctl) systemctl=$2 ;;
  esac
  shift 2
done
case "$systemd" in
  auto) if [ -d /run/systemd/system ]; then systemd=yes; else systemd=no; fi ;;
  yes|no) ;;
  *) bad "--systemd: auto, yes or no, got \"$systemd\"" ;;
esac

bin_dir=$root/usr/local/bin
share_dir=$root/usr/local/share/fleetmark
etc_dir=$root/etc/fleetmark
unit=$root/etc/systemd/system/fleetmark-agent.service
spool=$root/var/lib/fleetmark-agent

if [ "$uninstall" -eq 1 ]; then
  if [ "$systemd" = yes ] && [ -f "$unit" ]; then
    $systemctl disable --now fleetmark-agent || echo "install-agent: systemctl disable failed; removing the files anyway" >&2
  fi
  rm -f "$unit" "$bin_dir/fleetmark-agent" "$bin_dir/fleetmark" "$etc_dir/agent.env" "$etc_dir/enrollment_token"
  rm -rf "$share_dir"
  rmdir "$etc_dir" 2>/dev/null || true
  [ "$systemd" = yes ] && { $systemctl daemon-reload || true; }
  if [ "$purge" -eq 1 ]; then
    rm -rf "$spool"
    echo "fleetmark-agent removed, spool $spool too"
  else
    echo "fleetmark-agent removed; its spool $spool stays (results not yet acknowledged; --purge removes it)"
  fi
  exit 0
fi

[ -n "$coordinator" ] || bad "--coordinator IP:PORT is required"
if [ -n "$token_file" ] && [ -n "$token" ]; then bad "--token_file and --token: give one"; fi
if [ -n "$token_file" ] && [ ! -r "$token_file" ]; then bad "--token_file: cannot read $token_file"; fi
[ -z "$tls_ca" ] || [ -r "$tls_ca" ] || bad "--tls_ca_file: cannot read $tls_ca"
[ -n "$name" ] || name=$(hostname 2>/dev/null || cat /etc/hostname 2>/dev/null || echo agent)
# agent.env is read by systemd (one line per variable, no quoting): these rules keep
# every value a plain word.
check_coordinator --coordinator "$coordinator"
check_name --name "$name"
check_labels --labels "$labels"

case "$(uname -m)" in
  x86_64) machine=x86_64 ;;
  aarch64|arm64) machine=arm64 ;;
  armv7l|armv8l|armhf) machine=armhf ;;
  *) die "architecture $(shown "$(uname -m)"): x86_64, aarch64 or armv7l expected" ;;
esac
arch=$machine
if [ -n "$want_arch" ]; then
  case "$want_arch" in x86_64|arm64|armhf) ;; *) bad "--arch: x86_64, arm64 or armhf, got $(shown "$want_arch")" ;; esac
  if [ "$want_arch" != "$machine" ]; then
    [ "$root_given" -eq 1 ] ||
      bad "--arch $want_arch: this machine is $machine; another architecture only with --root (preparing an image)"
    echo "install-agent: warning: installing $want_arch binaries below $root on a $machine machine (--arch)" >&2
  fi
  arch=$want_arch
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The tarball's architecture, by its name and by `file` on the agent.
if [ -f "$dist" ]; then
  case "$(basename -- "$dist")" in
    *-linux-x86_64.tar.gz) dist_arch=x86_64 ;; *-linux-arm64.tar.gz) dist_arch=arm64 ;;
    *-linux-armhf.tar.gz) dist_arch=armhf ;; *) dist_arch="" ;;
  esac
  [ -z "$dist_arch" ] || [ "$dist_arch" = "$arch" ] || arch_mismatch "$(shown "$dist") is $dist_arch"
fi
bin=$(dist_binaries "$arch" "$dist" "$work")
bin_arch=$(binary_arch "$bin/fleetmark-agent")
[ -z "$bin_arch" ] || [ "$bin_arch" = "$arch" ] || arch_mismatch "its fleetmark-agent is a $bin_arch executable"

install -d -m 0755 "$bin_dir" "$share_dir" "$root/etc/systemd/system"
install -d -m 0750 "$etc_dir"
install -d -m 0700 "$spool"
install -m 0755 "$bin/fleetmark-agent" "$bin_dir/fleetmark-agent"
[ -f "$bin/fleetmark" ] && install -m 0755 "$bin/fleetmark" "$bin_dir/fleetmark"
[ -d "$bin/plans" ] && cp -r "$bin/plans" "$share_dir/"
if [ -n "$token_file" ]; then
  install -m 0600 "$token_file" "$etc_dir/enrollment_token"
elif [ -n "$token" ]; then
  (umask 077; printf '%s\n' "$token" > "$etc_dir/enrollment_token")
fi
tls_args=""
if [ -n "$tls_ca" ]; then
  install -m 0644 "$tls_ca" "$etc_dir/ca.pem"
  tls_args="--tls_ca_file=/etc/fleetmark/ca.pem"
fi
cat > "$etc_dir/agent.env.tmp" <<EOF
# Written by deploy/install-agent.sh; read by fleetmark-agent.service.
COORDINATOR=$coordinator
AGENT_NAME=$name
LABELS=$labels
TLS_ARGS=$tls_args
EOF
chmod 0644 "$etc_dir/agent.env.tmp"
mv "$etc_dir/agent.env.tmp" "$etc_dir/agent.env"

token_path=/etc/fleetmark/enrollment_token
if [ "$systemd" = yes ]; then
  install -m 0644 "$repo/deploy/systemd/fleetmark-agent.service" "$unit"
  [ -f "$etc_dir/enrollment_token" ] || echo "install-agent: no --token_file/--token: the agent enrolls only if its spool holds a credential" >&2
  $systemctl daemon-reload
  $systemctl enable --now fleetmark-agent
  echo "fleetmark-agent installed and started (systemctl status fleetmark-agent; journalctl -u fleetmark-agent)"
else
  args=("$root/usr/local/bin/fleetmark-agent" --coordinator="$coordinator" --name="$name")
  [ -n "$labels" ] && args+=(--labels="$labels")
  [ -f "$etc_dir/enrollment_token" ] && args+=(--token_file="$root$token_path")
  args+=(--spool_dir="$spool")
  [ -n "$tls_args" ] && args+=(--tls_ca_file="$etc_dir/ca.pem")
  line=""
  for a in "${args[@]}"; do line+="${line:+ }$(sh_quote "$a")"; done
  echo "fleetmark-agent installed; no systemd here: run it with"
  echo "  $line"
fi
