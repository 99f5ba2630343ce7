// Flags of the `fleetmark` commands that talk to a coordinator (submit, runs, agents,
// schedules, tokens, export, compare), parsed into RemoteOptions. --format, --out,
// --filter and --quick are shared with `fleetmark run` (run_flags.h).
#pragma once

#include <string>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engine/common/tls_probe.h"
#include "fleetmark/v1/plan.pb.h"

ABSL_DECLARE_FLAG(std::string, coordinator);
ABSL_DECLARE_FLAG(std::string, admin_token_file);
ABSL_DECLARE_FLAG(std::string, tls_ca_file);
ABSL_DECLARE_FLAG(std::string, tls_cert_file);
ABSL_DECLARE_FLAG(std::string, tls_key_file);
ABSL_DECLARE_FLAG(std::string, select);
ABSL_DECLARE_FLAG(bool, wait);
ABSL_DECLARE_FLAG(std::string, agents);
ABSL_DECLARE_FLAG(std::string, cases);
ABSL_DECLARE_FLAG(double, min_margin);
ABSL_DECLARE_FLAG(bool, include_emulated);
ABSL_DECLARE_FLAG(std::string, agent);
ABSL_DECLARE_FLAG(std::string, results);
ABSL_DECLARE_FLAG(std::string, profile);
ABSL_DECLARE_FLAG(std::string, run);
ABSL_DECLARE_FLAG(bool, measure);
ABSL_DECLARE_FLAG(int, tasks);
ABSL_DECLARE_FLAG(std::string, plan_out);
ABSL_DECLARE_FLAG(std::string, workload);
ABSL_DECLARE_FLAG(std::string, plan_latest);
ABSL_DECLARE_FLAG(int, limit);
ABSL_DECLARE_FLAG(std::string, cron);
ABSL_DECLARE_FLAG(std::string, description);
ABSL_DECLARE_FLAG(bool, all);
ABSL_DECLARE_FLAG(std::string, since);
ABSL_DECLARE_FLAG(std::string, state);
ABSL_DECLARE_FLAG(absl::Duration, timeout);
ABSL_DECLARE_FLAG(absl::Duration, queue_offline);
ABSL_DECLARE_FLAG(std::string, older_than);
ABSL_DECLARE_FLAG(bool, force);
ABSL_DECLARE_FLAG(bool, dry_run);

namespace fleetmark::cli {

// Files deploy/stack.sh writes in its state directory (relative to the working
// directory), used as defaults when no flag or environment variable says otherwise.
inline constexpr char kStackAdminTokenFile[] = ".fleetmark/admin_token";
inline constexpr char kStackPortFile[] = ".fleetmark/coordinator.port";

struct RemoteOptions {
  // host:port. From --coordinator, else $FLEETMARK_COORDINATOR, else 127.0.0.1 and the
  // port in .fleetmark/coordinator.port (the local stack's), else 127.0.0.1:7443.
  std::string coordinator;
  std::string coordinator_source;  // for messages: "--coordinator", "$FLEETMARK_COORDINATOR", ...
  // The admin token (whitespace stripped), "" = none, read from `admin_token_file`:
  // --admin_token_file, else $FLEETMARK_ADMIN_TOKEN_FILE, else .fleetmark/admin_token if
  // it exists. `admin_token_source` names which one, for messages.
  std::string admin_token;
  std::string admin_token_file;
  std::string admin_token_source;
  std::string tls_ca_pem;                 // "" = plaintext
  std::string tls_cert_pem, tls_key_pem;  // client certificate for mutual TLS
};

// Reads the connection flags, after checking that the string flags sent in requests
// (--select, --filter, --cron, --description, --agent, --agents, --state, --run,
// --plan_latest) are valid UTF-8 (CheckRequestText, command.h): every remote command
// gets its client here, before its first call. InvalidArgument naming the flag (or
// environment variable, or default file), the path and the problem (a directory,
// empty, unreadable: strerror) for a bad token or TLS file, a malformed
// .fleetmark/coordinator.port, or an inconsistent TLS set-up (a file that is not PEM, a
// key that does not belong to its certificate: CheckTlsClientFiles) (exit code 2).
// Reads files only; no connection.
absl::StatusOr<RemoteOptions> RemoteOptionsFromFlags();

// The CLI's TLS flags, as tls_probe.h names them in messages.
inline const TlsFlagNames kTlsFlagNames{"--tls_ca_file", "--tls_cert_file", "--tls_key_file"};

// The TLS material of `options`, for tls_probe.h.
TlsClientFiles TlsFiles(const RemoteOptions& options);

// --select checked with the coordinator's own selector parser (coordinator/service/
// selector.h) and --cron with its cron parser (coordinator/scheduler/cron.h; required),
// so a typo is exit 2 before any connection (a --select that is not UTF-8 too:
// CheckRequestText). InvalidArgument naming the flag. With `required` (submit,
// schedules create), an empty or blank --select is refused (the whole fleet is
// `--select all`); otherwise "" means every agent (agents list).
absl::Status CheckSelectFlag(bool required);
absl::Status CheckCronFlag();

// --filter (with --quick) on `plan` (submit, schedules create): OK if the regex compiles
// and selects at least one case (service::CountSelectedCases), else its InvalidArgument
// naming --filter. The coordinator checks again; this makes a typo exit 2 locally.
absl::Status CheckFilterFlag(const v1::Plan& plan);

// The items of a comma-separated list flag (`--agents 'vm, big-x86'` = {"vm",
// "big-x86"}), each with the spaces around it trimmed; an empty or blank item (two
// commas, a trailing comma, an empty value) is InvalidArgument naming `flag` ("--agents")
// and the item's position.
absl::StatusOr<std::vector<std::string>> SplitListFlag(absl::string_view flag, absl::string_view value);

// --timeout of `submit --wait`: InfiniteDuration when not given (wait until the run
// ends); InvalidArgument naming the flag for a value <= 0.
absl::StatusOr<absl::Duration> TimeoutFromFlag();

}  // namespace fleetmark::cli
