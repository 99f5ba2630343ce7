#include "engine/common/host_port.h"

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "engine/common/text.h"

namespace fleetmark {

absl::StatusOr<std::pair<std::string, int>> ParseHostPort(std::string_view address_view, std::string_view field) {
  const absl::string_view address(address_view.data(), address_view.size());
  const auto bad = [&] {
    return absl::InvalidArgumentError(absl::StrCat(
        std::string(field), ": expected host:port (IPv4, [IPv6] or localhost; port 0..65535), got \"",
        EscapeForTerminal(std::string_view(address.data(), address.size()), 80), "\""));
  };
  std::string host;
  absl::string_view port_text;
  if (absl::StartsWith(address, "[")) {
    const size_t close = address.find("]:");
    if (close == absl::string_view::npos) return bad();
    host = std::string(address.substr(1, close - 1));
    port_text = address.substr(close + 2);
  } else {
    const size_t colon = address.rfind(':');
    if (colon == absl::string_view::npos || address.find(':') != colon) return bad();
    host = std::string(address.substr(0, colon));
    port_text = address.substr(colon + 1);
  }
  int port = 0;
  if (host.empty() || !absl::SimpleAtoi(port_text, &port) || port < 0 || port > 65535) return bad();
  return std::make_pair(host, port);
}

}  // namespace fleetmark
