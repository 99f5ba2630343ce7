# shellcheck shell=sh
# pid_runs PID BINARY: true if process PID is alive and runs BINARY (the basename of its
# argv[0], from /proc/PID/cmdline). kill -0 alone accepts a process that has exited but
# is not reaped yet (a zombie: its cmdline is empty) and a pid the kernel has given to
# another program since. POSIX sh (also run on Android phones by deploy/android.sh, which
# sends this text over adb): used by deploy/stack.sh and deploy/android.sh.
pid_runs() {
  case "$1" in ''|*[!0-9]*) return 1 ;; esac
  kill -0 "$1" 2>/dev/null || return 1
  pid_runs_exe=$(tr '\000' '\n' < "/proc/$1/cmdline" 2>/dev/null | head -n 1)
  [ -n "$pid_runs_exe" ] && [ "${pid_runs_exe##*/}" = "$2" ]
}
