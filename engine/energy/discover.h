// Finding a host's energy sources: Linux powercap RAPL zones, hwmon power and energy
// channels, and batteries (engine/energy/{rapl,hwmon,battery}_sources.h; docs/energy.md).
//
//   FLEETMARK_ASSIGN_OR_RETURN(std::vector<EnergySource> sources, DiscoverEnergySources(""));
//   if (std::string why = EnergyUnavailableReason(sources); !why.empty()) {
//     std::cout << "energy: unavailable (" << why << ")\n";
//   }
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/energy/energy_files.h"
#include "engine/energy/energy_source.h"

namespace fleetmark::engine::energy {

// Every source `files` shows: RAPL zones, then hwmon channels, then batteries, each
// with what it covers, its resolution and whether it can be read now (why_not if not).
// Names are unique (a repeated one gets " #2", " #3"). Malformed files never fail the
// discovery: they make their source unreadable, with the reason. Takes a few
// milliseconds (one read per file); thread-safe when `files` is.
std::vector<EnergySource> DiscoverEnergySources(const EnergyFiles& files);

// The same below `fsroot` ("" = the live machine). InvalidArgument naming fsroot when it
// is not "" and not a directory.
absl::StatusOr<std::vector<EnergySource>> DiscoverEnergySources(absl::string_view fsroot);

// "" when a source is readable; else why energy cannot be measured, e.g. "no RAPL zone
// in /sys/class/powercap, no hwmon power or energy channel, no battery in
// /sys/class/power_supply" or "no readable source: rapl:package-0 (permission denied
// ...)". Never "0": the caller reports "energy: unavailable (<why>)". Pure.
std::string EnergyUnavailableReason(const std::vector<EnergySource>& sources);

}  // namespace fleetmark::engine::energy
