// Turns the agent's `--coordinator` address into a gRPC target. IP literals get the
// `ipv4:` / `ipv6:` schemes, which need no resolver (phones and boards may have no DNS
// and no /etc/hosts); other host names go through gRPC's DNS resolver.
#pragma once

#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"

namespace fleetmark::agent {

// "10.0.0.5:7000" -> "ipv4:10.0.0.5:7000"; "[fe80::1]:7000" -> "ipv6:[fe80::1]:7000";
// "coord.lan:7000" -> "dns:///coord.lan:7000"; targets that already carry a scheme
// ("ipv4:", "ipv6:", "dns:", "unix:") are returned unchanged. InvalidArgument (naming
// the value) for a missing or out-of-range port (1..65535) or a malformed address.
absl::StatusOr<std::string> CoordinatorTarget(absl::string_view address);

}  // namespace fleetmark::agent
