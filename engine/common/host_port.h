// The one parser of "host:port" listen addresses (the coordinator's --listen_address and
// --http_address), of port numbers, and the check of a coordinator address an agent dials.
//
// Thread-safety: stateless.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace fleetmark {

// Parses "host:port": an IPv4 address or host name, or "[IPv6]", then ":" and a port
// 0..65535 (0 = any free port). InvalidArgument naming `field`, the value and the
// expected form, e.g. `listen_address: expected host:port (IPv4, [IPv6] or localhost;
// port 0..65535), got "127.0.0.1:99999"`.
absl::StatusOr<std::pair<std::string, int>> ParseHostPort(std::string_view address, std::string_view field);

// The port in `text`: decimal digits only (no sign, no spaces), min_port..65535.
// std::nullopt otherwise.
std::optional<int> ParsePort(std::string_view text, int min_port);

// Whether `host` is a DNS name: dot-separated labels of [A-Za-z0-9-], each 1..63
// characters, at most 253 characters in all.
bool IsDnsName(std::string_view host);

// Checks an address a client dials a coordinator at (fleetmark-agent --coordinator):
//   IP:PORT, [IPv6]:PORT, HOST:PORT (HOST a DNS name, IsDnsName),
//   dns://DNS_SERVER_IP/HOST:PORT (also dns:///HOST:PORT and dns:HOST:PORT), and the
//   gRPC targets ipv4:IP:PORT[,IP:PORT...], ipv6:[IPv6]:PORT[,...], unix:PATH (PATH not
//   empty, UTF-8 without control characters);
// ports 1..65535, digits only. OK, or InvalidArgument naming `field`, the value (escaped
// for a terminal) and these forms.
absl::Status CheckDialAddress(std::string_view address, std::string_view field);

}  // namespace fleetmark
