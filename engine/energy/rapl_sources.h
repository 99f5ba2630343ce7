// Linux powercap RAPL zones as energy sources: every /sys/class/powercap/<type>:<n>[:<m>]
// with an energy_uj file (Intel's intel-rapl and intel-rapl-mmio; AMD Zen parts use the
// same intel-rapl zones since Linux 5.8). Internal to engine/energy; use discover.h.
//
// A zone is named by its `name` file ("package-0"), a sub-zone by its parent's and its
// own ("rapl:package-0/core"); energy_uj counts µJ and wraps after max_energy_range_uj.
// Reference for units, update rate and coverage: Khan, Hirki, Niemi, Nurminen, Ou, "RAPL
// in Action: Experiences in Using RAPL for Power Measurements", ACM TOMPECS 3(2), 2018.
#pragma once

#include <vector>

#include "engine/energy/energy_files.h"
#include "engine/energy/energy_source.h"

namespace fleetmark::engine::energy::internal {

// The zones in directory order; an unreadable energy_uj is a source with readable
// false and why_not (PermissionDenied: "permission denied ... root-only since Linux 5.10,
// CVE-2020-8694 ..."); garbage in any file is a reason, never a crash. Thread-safe when
// `files` is.
std::vector<EnergySource> DiscoverRaplSources(const EnergyFiles& files);

}  // namespace fleetmark::engine::energy::internal
