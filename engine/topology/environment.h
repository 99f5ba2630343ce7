// Environment snapshots around a case (per-CPU frequency, temperatures, trip points,
// load average) and the throttling verdict that compares two of them.
//
//   v1::EnvSnapshot before = TakeEnvSnapshot();
//   ... run the case ...
//   v1::EnvSnapshot after = TakeEnvSnapshot();
//   ThrottleVerdict v = Throttled(before, after, host);
//   if (v.throttled) LOG(...) << v.reason;
#pragma once

#include <string>
#include <string_view>

#include "fleetmark/v1/host.pb.h"

namespace fleetmark::engine {

// A case is throttled when, for some core class, the highest current frequency among
// its CPUs after the case is more than this fraction below the highest before it. The
// per-class maximum (rather than every CPU) ignores idle cores that clock down on
// their own; 15% is above the step between adjacent P-states of common governors.
inline constexpr double kThrottleFrequencyDropFraction = 0.15;

// Reads the snapshot now from `fsroot` ("" = the live machine): per logical CPU
// sys/devices/system/cpu/cpu<N>/cpufreq/scaling_cur_freq (cpuinfo_cur_freq if absent;
// 0 for a CPU without it; empty when no CPU has it), every
// sys/class/thermal/thermal_zone<N>/{temp,type} (milli-°C -> °C), whether a zone is at
// or above one of its "passive", "hot" or "critical" trip points, proc/loadavg, and the
// x86 thermal_throttle event counters, and the conditions the preflight gates read:
// sys/class/power_supply batteries (lowest level, any charging, hottest temperature;
// level -1 when none is known), proc/meminfo MemAvailable and the distinct cpufreq
// governors of the online CPUs joined by "," (other_cpu_percent is left to the
// gates' check, engine/health/preflight.h). Readings outside their plausible range
// (sensor_range.h: -40..150 °C, 10 MHz..10 GHz) are left out, each with a line in
// `notes`. Never fails: unreadable parts stay empty/0.
// Thread-safe; takes well under a millisecond per CPU.
v1::EnvSnapshot TakeEnvSnapshot(std::string_view fsroot = "");

struct ThrottleVerdict {
  bool throttled = false;
  std::string reason;  // "" when not throttled; else e.g.
                       // "class performance: max frequency 4800000 -> 3600000 kHz (-25.0%)"
};

// Throttled if (a) for some class of `host` (all CPUs as one group when it has none)
// the max current frequency dropped by more than kThrottleFrequencyDropFraction between
// the snapshots, (b) `after` has a trip point crossed, or (c) the x86 thermal throttle
// event counters increased. Snapshots without frequencies skip (a). Pure function.
ThrottleVerdict Throttled(const v1::EnvSnapshot& before, const v1::EnvSnapshot& after, const v1::HostInfo& host);

}  // namespace fleetmark::engine
