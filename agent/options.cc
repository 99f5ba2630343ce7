#include "agent/options.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "agent/target.h"
#include "engine/common/name_rule.h"
#include "engine/common/status_macros.h"
#include "engine/common/text.h"

namespace fleetmark::agent {

absl::Status ValidateAgentOptions(const AgentOptions& options) {
  FLEETMARK_RETURN_IF_ERROR(CoordinatorTarget(options.coordinator).status());
  if (!IsName(options.name)) {
    return absl::InvalidArgumentError(NameRuleMessage("name", options.name));
  }
  if (options.spool_dir.empty()) return absl::InvalidArgumentError("spool_dir: empty");
  if (options.tls.cert_file.empty() != options.tls.key_file.empty()) {
    return absl::InvalidArgumentError("--tls_cert_file and --tls_key_file: give both (mutual TLS) or neither");
  }
  if (!options.tls.cert_file.empty() && options.tls.ca_file.empty()) {
    return absl::InvalidArgumentError("--tls_cert_file: mutual TLS needs --tls_ca_file too");
  }
  FLEETMARK_RETURN_IF_ERROR(ValidateBackoffOptions(options.backoff));
  for (const auto& [field, value] :
       {std::pair<absl::string_view, absl::Duration>("welcome_timeout", options.welcome_timeout),
        {"default_heartbeat_interval", options.default_heartbeat_interval},
        {"keepalive_time", options.keepalive_time},
        {"keepalive_timeout", options.keepalive_timeout}}) {
    if (value < absl::Milliseconds(10) || value > absl::Hours(1)) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ": 10ms <= ", field, " <= 1h, got ", absl::FormatDuration(value)));
    }
  }
  return absl::OkStatus();
}

}  // namespace fleetmark::agent
