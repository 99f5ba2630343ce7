// The one parser of "host:port" listen addresses (the coordinator's --listen_address and
// --http_address).
//
// Thread-safety: stateless.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"

namespace fleetmark {

// Parses "host:port": an IPv4 address or host name, or "[IPv6]", then ":" and a port
// 0..65535 (0 = any free port). InvalidArgument naming `field`, the value and the
// expected form, e.g. `listen_address: expected host:port (IPv4, [IPv6] or localhost;
// port 0..65535), got "127.0.0.1:99999"`.
absl::StatusOr<std::pair<std::string, int>> ParseHostPort(std::string_view address, std::string_view field);

}  // namespace fleetmark
