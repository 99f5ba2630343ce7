// Which of a host's energy sources measures a case (docs/energy.md, "Per case"): the
// widest readable one, summing the sources that do not overlap.
//
//   std::optional<EnergyChoice> choice = ChooseEnergySources(DiscoverEnergySources(files));
//   if (!choice) ... EnergyUnavailableReason(sources) says why.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/energy/energy_source.h"

namespace fleetmark::engine::energy {

// The sources a case's energy is the sum of, and what that sum is.
struct EnergyChoice {
  std::vector<EnergySource> sources;  // all of one Reading
  std::string id;                     // the names joined by "+": "rapl:package-0+rapl:package-1"
  std::string covers;                 // the sources' covers joined by "; "
  Reading reading = Reading::kCounter;
  // The sum's smallest step: the sources' resolutions added (J for counters, W for power).
  double resolution = 0;
  // The slowest source's own update interval, s (0 = unknown).
  double update_interval_s = 0;
};

// The readable sources to measure with, in this order of preference:
//  1. RAPL `psys` (the whole platform as the SoC reports it), alone;
//  2. else every readable top-level RAPL zone but psys (package-N: the packages do not
//     overlap; their sub-zones, which do, and dram, are not taken);
//  3. else the first readable hwmon energy counter, 4. hwmon power channel, 5. battery.
// nullopt when none is readable (EnergyUnavailableReason says why). Pure.
std::optional<EnergyChoice> ChooseEnergySources(const std::vector<EnergySource>& sources);

}  // namespace fleetmark::engine::energy
