// One reading of an energy source: a counter value, or a power, and for a battery
// whether it is charging. Internal to engine/energy; EnergyMeter (energy_meter.h) turns
// readings into joules.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "engine/energy/energy_files.h"
#include "engine/energy/energy_source.h"

namespace fleetmark::engine::energy {

struct SourceSample {
  uint64_t counter = 0;  // Reading::kCounter: the raw counter (µJ)
  double watts = 0;      // Reading::kPower: power drawn, W (a charging battery: 0)
  // Battery: status "Charging", or current flowing into the battery by its convention:
  // the sample says nothing about the device's consumption.
  bool charging = false;
};

// Reads `source` now. Errors name the file: NotFound, PermissionDenied, Unavailable from
// the read; InvalidArgument for garbage, a negative counter or power, a battery voltage
// outside 1..60 V. Thread-safe when `files` is.
absl::StatusOr<SourceSample> ReadSourceSample(const EnergyFiles& files, const EnergySource& source);

}  // namespace fleetmark::engine::energy
