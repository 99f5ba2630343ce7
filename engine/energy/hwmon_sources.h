// hwmon power and energy channels as energy sources: /sys/class/hwmon/hwmon<K>/
// energy<N>_input (µJ, cumulative) and power<N>_input, else power<N>_average (µW), as
// boards' INA2xx current/power monitors (ina219, ina226, ina230/231, ina238), SoC PMICs,
// GPUs and AMD's amd_energy expose them (Linux Documentation/hwmon/sysfs-interface.rst).
// Internal to engine/energy; use discover.h.
//
// A channel is named "hwmon:<chip>[ <chip label>]/<channel label>", the channel label
// being power<N>_label / energy<N>_label, else "power<N>" / "energy<N>".
#pragma once

#include <vector>

#include "engine/energy/energy_files.h"
#include "engine/energy/energy_source.h"

namespace fleetmark::engine::energy::internal {

// Every power and energy channel, hwmon devices in directory order, channels by number.
// A value that cannot be read or parsed makes the channel unreadable with the reason;
// a negative power or energy too. Thread-safe when `files` is.
std::vector<EnergySource> DiscoverHwmonSources(const EnergyFiles& files);

}  // namespace fleetmark::engine::energy::internal
