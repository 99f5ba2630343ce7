// The host's energy sources as HostInfo.energy_sources and energy_unavailable
// (engine/energy/discover.h). Internal to engine/topology; DetectHost calls it.
#pragma once

#include "absl/strings/string_view.h"
#include "engine/energy/energy_source.h"
#include "fleetmark/v1/host.pb.h"

namespace fleetmark::engine::topology_internal {

// One source as a message: every field of EnergySource, the resolution's unit "J" for a
// counter and "W" for a power source, the battery convention's evidence. Pure.
v1::EnergySourceInfo ToEnergySourceInfo(const energy::EnergySource& source);

// Discovers the sources below `fsroot` ("" = the live machine) into `host`; when none is
// readable, or `emulated` (the numbers would measure the emulator), energy_unavailable
// says why. A bad fsroot is a note, not an error. Thread-safe.
void FillEnergySources(absl::string_view fsroot, bool emulated, v1::HostInfo& host);

}  // namespace fleetmark::engine::topology_internal
