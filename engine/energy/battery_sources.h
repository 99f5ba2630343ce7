// Batteries as energy sources: /sys/class/power_supply/<name> of type Battery (or named
// "battery" when its type is unreadable, as on Android), not a peripheral's (scope
// "Device": a wireless mouse), with current_now and voltage_now; power = |current| ×
// voltage while discharging. Internal to engine/energy;
// use discover.h.
//
// Vendors differ from the kernel ABI (µA, µV) and from Android's BatteryManager
// (BATTERY_PROPERTY_CURRENT_NOW: µA, negative = discharging): DetectBatteryConvention
// decides the units and the sign from the values and the status, and records why.
// A charging battery's current, or a battery's on external power, is not the device's
// consumption: both are flagged (EnergySource::charging, on_external_power; every
// sample's SourceSample::charging).
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/energy/energy_files.h"
#include "engine/energy/energy_source.h"

namespace fleetmark::engine::energy::internal {

// |current_now| at or above this is µA (10 mA or more), below it mA (as µA it would be
// under 10 mA, less than any phone draws while running a benchmark; as mA 1..9999 mA).
inline constexpr int64_t kMicroampThreshold = 10'000;

// The units and sign of a battery's readings:
// - voltage_now above 100000 is µV, 1000..100000 mV; the volts must lie in 1..60 V;
// - |current_now| >= kMicroampThreshold is µA, 1..kMicroampThreshold-1 mA, 0 takes the
//   voltage's scale;
// - the discharge sign is current_now's sign while "Discharging", the opposite while
//   "Charging", else 0 (unknown: magnitudes used).
// InvalidArgument naming voltage_now when it is no battery voltage in µV or mV. Pure.
absl::StatusOr<BatteryConvention> DetectBatteryConvention(int64_t current_raw, int64_t voltage_raw,
                                                          absl::string_view status);

// Every battery with its convention; one without current_now or voltage_now, or whose
// values cannot be read or make no sense, is listed unreadable with the reason.
// Thread-safe when `files` is.
std::vector<EnergySource> DiscoverBatterySources(const EnergyFiles& files);

}  // namespace fleetmark::engine::energy::internal
