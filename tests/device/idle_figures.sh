#!/bin/sh
# Idle figures of a running process, averaged over SECONDS (default 60):
#   tests/device/idle_figures.sh PID [SECONDS]
# (the figures of docs/devices.md and docs/capacity.md; not a ctest: it measures time).
# Prints RSS (VmRSS at the end), CPU % of one core (utime+stime delta), voluntary
# wake-ups/s (the sum of voluntary_ctxt_switches over /proc/PID/task/*/status) and the
# same per thread (name from /proc/PID/task/TID/comm).
set -eu
pid=$1; secs=${2:-60}
hz=$(getconf CLK_TCK)
snap() {  # TID NAME VOLUNTARY per thread
  for t in /proc/"$pid"/task/*; do
    tid=${t##*/}
    v=$(sed -n 's/^voluntary_ctxt_switches:[[:space:]]*//p' "$t/status" 2>/dev/null) || continue
    [ -n "$v" ] && printf '%s %s %s\n' "$tid" "$(tr ' ' _ < "$t/comm")" "$v"
  done
}
cpu() { awk '{print $14 + $15}' /proc/"$pid"/stat; }
a=$(snap); c0=$(cpu); t0=$(date +%s.%N)
sleep "$secs"
b=$(snap); c1=$(cpu); t1=$(date +%s.%N)
rss=$(sed -n 's/^VmRSS:[[:space:]]*//p' /proc/"$pid"/status)
printf '%s\n--\n%s\n' "$a" "$b" | awk -v c0="$c0" -v c1="$c1" -v t0="$t0" -v t1="$t1" -v hz="$hz" -v rss="$rss" '
  $0 == "--" { after = 1; next }
  !after { before[$1] = $3; next }
  { name[$1] = $2; d = $3 - ($1 in before ? before[$1] : 0); delta[$1] = d; total += d }
  END {
    secs = t1 - t0
    printf "over %.1f s: RSS %s, CPU %.3f %% of a core, %.2f voluntary wake-ups/s\n",
           secs, rss, 100 * (c1 - c0) / hz / secs, total / secs
    for (t in delta) if (delta[t] > 0) printf "  %-20s tid %-8s %.2f/s\n", name[t], t, delta[t] / secs
  }'
