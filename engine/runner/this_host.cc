#include "engine/runner/this_host.h"

#include "engine/topology/host.h"

namespace fleetmark::engine {

const v1::HostInfo& ThisHost() {
  static const v1::HostInfo* host = [] {
    absl::StatusOr<v1::HostInfo> detected = DetectHost();
    return new v1::HostInfo(detected.ok() ? *detected : v1::HostInfo());
  }();
  return *host;
}

}  // namespace fleetmark::engine
