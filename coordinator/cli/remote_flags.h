// Flags of the `fleetmark` commands that talk to a coordinator (submit, runs, agents,
// schedules, tokens, export, compare), parsed into RemoteOptions. --format, --out,
// --filter and --quick are shared with `fleetmark run` (run_flags.h).
#pragma once

#include <string>

#include "absl/flags/declare.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

ABSL_DECLARE_FLAG(std::string, coordinator);
ABSL_DECLARE_FLAG(std::string, admin_token_file);
ABSL_DECLARE_FLAG(std::string, tls_ca_file);
ABSL_DECLARE_FLAG(std::string, tls_cert_file);
ABSL_DECLARE_FLAG(std::string, tls_key_file);
ABSL_DECLARE_FLAG(std::string, select);
ABSL_DECLARE_FLAG(bool, wait);
ABSL_DECLARE_FLAG(std::string, agents);
ABSL_DECLARE_FLAG(int, limit);
ABSL_DECLARE_FLAG(std::string, cron);
ABSL_DECLARE_FLAG(std::string, description);

namespace fleetmark::cli {

struct RemoteOptions {
  std::string coordinator;       // host:port
  std::string admin_token;       // read from --admin_token_file (or $FLEETMARK_ADMIN_TOKEN)
  std::string tls_ca_pem;        // "" = plaintext
  std::string tls_cert_pem, tls_key_pem;  // client certificate for mutual TLS
};

// Reads the connection flags. InvalidArgument naming the flag for an unreadable file or
// an inconsistent TLS set-up (exit code 2).
absl::StatusOr<RemoteOptions> RemoteOptionsFromFlags();

// --select checked with the coordinator's own selector parser (coordinator/service/
// selector.h; "" = every agent) and --cron with its cron parser (coordinator/scheduler/
// cron.h; required), so a typo is exit 2 before any connection. InvalidArgument naming
// the flag.
absl::Status CheckSelectFlag();
absl::Status CheckCronFlag();

}  // namespace fleetmark::cli
