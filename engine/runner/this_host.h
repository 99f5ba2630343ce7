// Internal to engine/runner: this machine's HostInfo, detected once per process.
#pragma once

#include "fleetmark/v1/host.pb.h"

namespace fleetmark::engine {

// DetectHost() on first call (later calls return the same object); an empty HostInfo
// if detection fails. Thread-safe.
const v1::HostInfo& ThisHost();

}  // namespace fleetmark::engine
