#include "engine/common/host_port.h"

#include <arpa/inet.h>

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "engine/common/text.h"

namespace fleetmark {

absl::StatusOr<std::pair<std::string, int>> ParseHostPort(std::string_view address_view, std::string_view field) {
  const absl::string_view address(address_view.data(), address_view.size());
  const auto bad = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(field), ": expected host:port (IPv4, [IPv6] or localhost; port 0..65535), got \"",
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
  const std::optional<int> port = ParsePort(std::string_view(port_text.data(), port_text.size()), 0);
  if (host.empty() || !port.has_value()) return bad();
  return std::make_pair(host, *port);
}

std::optional<int> ParsePort(std::string_view text, int min_port) {
  if (text.empty() || text.size() > 5 || text.find_first_not_of("0123456789") != std::string_view::npos) {
    return std::nullopt;
  }
  int port = 0;
  for (char c : text) port = port * 10 + (c - '0');
  if (port < min_port || port > 65535) return std::nullopt;
  return port;
}

bool IsDnsName(std::string_view host) {
  if (host.empty() || host.size() > 253) return false;
  for (absl::string_view label : absl::StrSplit(absl::string_view(host.data(), host.size()), '.')) {
    if (label.empty() || label.size() > 63) return false;
    for (char c : label) {
      if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-') return false;
    }
  }
  return true;
}

namespace {

bool IsIp(absl::string_view host, int family) {
  const std::string text(host);
  unsigned char buffer[sizeof(in6_addr)];
  return inet_pton(family, text.c_str(), buffer) == 1;
}

// "IPV4:PORT" (ipv4 true) or "[IPV6]:PORT"; `port_required` false admits the address alone.
bool IsIpPort(absl::string_view text, bool port_required, bool allow_v4, bool allow_v6) {
  absl::string_view host = text;
  absl::string_view port;
  bool has_port = false;
  if (absl::StartsWith(text, "[")) {
    const size_t close = text.find(']');
    if (close == absl::string_view::npos || !allow_v6) return false;
    host = text.substr(1, close - 1);
    const absl::string_view rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return false;
      port = rest.substr(1);
      has_port = true;
    }
    if (!IsIp(host, AF_INET6)) return false;
  } else {
    const size_t colon = text.find(':');
    if (colon != absl::string_view::npos) {
      host = text.substr(0, colon);
      port = text.substr(colon + 1);
      has_port = true;
    }
    if (!allow_v4 || !IsIp(host, AF_INET)) return false;
  }
  if (!has_port) return !port_required;
  return ParsePort(std::string_view(port.data(), port.size()), 1).has_value();
}

// HOST:PORT or [IPv6]:PORT with HOST an IPv4 address or a DNS name.
bool IsHostPort(absl::string_view text) {
  if (absl::StartsWith(text, "[")) return IsIpPort(text, true, false, true);
  const size_t colon = text.rfind(':');
  if (colon == absl::string_view::npos || text.find(':') != colon) return false;
  const absl::string_view host = text.substr(0, colon);
  const absl::string_view port = text.substr(colon + 1);
  if (!ParsePort(std::string_view(port.data(), port.size()), 1).has_value()) return false;
  return IsIp(host, AF_INET) || IsDnsName(std::string_view(host.data(), host.size()));
}

bool IsDialAddress(absl::string_view address) {
  if (absl::ConsumePrefix(&address, "unix:")) {
    return !address.empty() && !TextProblem(std::string_view(address.data(), address.size()), false).has_value();
  }
  const bool v4 = absl::StartsWith(address, "ipv4:");
  if (v4 || absl::StartsWith(address, "ipv6:")) {
    address.remove_prefix(5);
    for (absl::string_view one : absl::StrSplit(address, ',')) {
      if (!IsIpPort(one, true, v4, !v4)) return false;
    }
    return true;
  }
  if (absl::ConsumePrefix(&address, "dns:")) {
    if (absl::ConsumePrefix(&address, "//")) {
      const size_t slash = address.find('/');
      if (slash == absl::string_view::npos) return false;
      const absl::string_view server = address.substr(0, slash);
      if (!server.empty() && !IsIpPort(server, false, true, true)) return false;
      address = address.substr(slash + 1);
    }
  }
  return IsHostPort(address);
}

}  // namespace

absl::Status CheckDialAddress(std::string_view address_view, std::string_view field) {
  const absl::string_view address(address_view.data(), address_view.size());
  if (IsDialAddress(address)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      std::string(field),
      ": expected IP:PORT, [IPv6]:PORT, HOST:PORT, dns://DNS_SERVER_IP/HOST:PORT, or a gRPC target ipv4:IP:PORT, "
      "ipv6:[IPv6]:PORT, dns:HOST:PORT, unix:/PATH (HOST: DNS labels of [A-Za-z0-9-], 1-63 characters each, "
      "at most 253 in all; PORT: 1..65535, digits only), got \"",
      EscapeForTerminal(address_view, 80), "\""));
}

}  // namespace fleetmark
