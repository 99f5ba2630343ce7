// LoadHwlocTopology for builds without hwloc (the static device builds of
// deploy/dist.sh: Debian's libhwloc.a needs libudev, which has no static archive).
// Detection then uses the sysfs reader, and HostInfo's notes say why.
#include "engine/topology/topology_view.h"

namespace fleetmark::engine::topology_internal {

absl::StatusOr<TopologyView> LoadHwlocTopology(absl::string_view) {
  return absl::UnavailableError("this build has no hwloc (static device build)");
}

}  // namespace fleetmark::engine::topology_internal
