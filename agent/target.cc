#include "agent/target.h"

#include <arpa/inet.h>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "engine/common/host_port.h"

namespace fleetmark::agent {
namespace {

absl::Status BadAddress(absl::string_view address, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("coordinator: expected host:port, [ipv6]:port or a gRPC target (ipv4:, ipv6:, "
                   "dns:, unix:), port 1..65535; got \"",
                   address, "\" (", why, ")"));
}

}  // namespace

absl::StatusOr<std::string> CoordinatorTarget(absl::string_view address) {
  for (absl::string_view scheme : {"ipv4:", "ipv6:", "dns:", "unix:"}) {
    if (absl::StartsWith(address, scheme)) return std::string(address);
  }
  if (address.empty()) return BadAddress(address, "empty");
  absl::string_view host;
  absl::string_view port_text;
  if (address.front() == '[') {
    const size_t close = address.find(']');
    if (close == absl::string_view::npos || close + 1 >= address.size() || address[close + 1] != ':') {
      return BadAddress(address, "unterminated [ipv6] or no :port");
    }
    host = address.substr(1, close - 1);
    port_text = address.substr(close + 2);
  } else {
    const size_t colon = address.rfind(':');
    if (colon == absl::string_view::npos) return BadAddress(address, "no :port");
    host = address.substr(0, colon);
    port_text = address.substr(colon + 1);
    if (host.find(':') != absl::string_view::npos) {
      return BadAddress(address, "an IPv6 address must be written in brackets");
    }
  }
  const std::optional<int> parsed_port =
      ParsePort(std::string_view(port_text.data(), port_text.size()), 1);  // the one port rule
  if (!parsed_port) return BadAddress(address, absl::StrCat("port \"", port_text, "\""));
  const int port = *parsed_port;
  if (host.empty()) return BadAddress(address, "empty host");
  const std::string host_str(host);
  in_addr v4;
  if (inet_pton(AF_INET, host_str.c_str(), &v4) == 1) {
    return absl::StrCat("ipv4:", host_str, ":", port);
  }
  in6_addr v6;
  if (inet_pton(AF_INET6, host_str.c_str(), &v6) == 1) {
    return absl::StrCat("ipv6:[", host_str, "]:", port);
  }
  if (address.front() == '[') return BadAddress(address, "not an IPv6 address in brackets");
  return absl::StrCat("dns:///", host_str, ":", port);
}

}  // namespace fleetmark::agent
