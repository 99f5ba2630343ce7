// The conditions of an environment snapshot as text (what `fleetmark runs show` and the
// web Run page print for the start and end of each case). Protos only, no hwloc: the
// coordinator and the CLI link it through fleetmark_fingerprint.
//
//   std::cout << FormatConditions(result.env_before());
#pragma once

#include <string>

#include "fleetmark/v1/host.pb.h"

namespace fleetmark::engine {

// The conditions an environment snapshot recorded (what the preflight gates read), one
// line, e.g. "battery 81 % charging, battery 31.5 °C, hottest zone 47.0 °C, load 0.42,
// free memory 6021 MiB, governor schedutil, other CPU 3.1 %, gates failed: ...". Unknown
// values are left out; "no conditions recorded" for an empty snapshot. Pure, thread-safe.
std::string FormatConditions(const v1::EnvSnapshot& env);

}  // namespace fleetmark::engine
