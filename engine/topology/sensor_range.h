// Plausible ranges of the sensors fleetmark reads (sysfs thermal zones, cpufreq,
// cpu_capacity, power_supply). A reading outside its range -- a driver's sentinel such
// as -263200 m°C, a garbage cpuinfo_max_freq of 10^23, a cpu_capacity of -5 -- is
// left out (unknown) with a note, never stored as a fact. Internal to engine/topology.
//
//   std::optional<double> c = ReadSensor(reader, dir + "/temp", kTemperatureRange,
//                                        1e-3, "thermal_zone0", &notes);
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "engine/topology/sysfs.h"

namespace fleetmark::engine::topology_internal {

struct SensorRange {
  double min;              // inclusive, in `unit`
  double max;              // inclusive
  absl::string_view unit;  // "°C", "kHz", "%", ""
};

// Temperatures (thermal zones, batteries): -40 .. 150 °C (the industrial range of
// silicon plus a margin; below -40 or above 150 is a sentinel or a broken driver).
inline constexpr SensorRange kTemperatureRange{-40, 150, "°C"};
// CPU frequencies (cpufreq, hwloc): 10 MHz .. 10 GHz, in kHz.
inline constexpr SensorRange kFrequencyRange{10'000, 10'000'000, "kHz"};
// cpu_capacity (arch_topology: the fastest CPU is 1024 = SCHED_CAPACITY_SCALE): 1..1024.
inline constexpr SensorRange kCapacityRange{1, 1024, ""};
// Battery level (power_supply capacity): 0..100 %.
inline constexpr SensorRange kBatteryLevelRange{0, 100, "%"};

// Whether `value` lies in `range`; if not, appends "<what>: <value><unit> outside
// <min>..<max><unit>, left out" to `notes` (when not null). NaN is outside.
bool InSensorRange(double value, const SensorRange& range, absl::string_view what, std::vector<std::string>* notes);

// Reads the first number of the file at `path` (decimal, sign and exponent allowed),
// times `scale` (e.g. 1e-3 for milli-°C), and returns it when in `range`. An absent
// file gives nullopt silently; text that is not a number, or a value out of range,
// gives nullopt and a note naming `what`. Thread-safe.
std::optional<double> ReadSensor(const SysfsReader& reader, absl::string_view path, const SensorRange& range,
                                 double scale, absl::string_view what, std::vector<std::string>* notes);

}  // namespace fleetmark::engine::topology_internal
