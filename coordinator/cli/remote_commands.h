// The `fleetmark` commands that talk to a coordinator's ControlService (with the admin
// token): submit, runs list|show|cancel, agents list|remove, schedules create|list|delete,
// tokens create|list|revoke, export, compare, map, recommend. A RUN argument is a run id or a unique
// prefix of it with at least 6 hex digits (resolved by the coordinator).
#pragma once

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "coordinator/cli/command.h"
#include "coordinator/cli/remote_client.h"
#include "fleetmark/v1/control.pb.h"

namespace fleetmark::cli {

// submit, runs list, runs show, runs cancel (remote_run_commands.cc).
void RegisterRunRemoteCommands(CommandRegistry& registry);
// agents list|remove, schedules create|list|delete, tokens create|list|revoke (remote_fleet_commands.cc).
void RegisterFleetRemoteCommands(CommandRegistry& registry);
// export, compare (remote_results_commands.cc).
void RegisterResultsRemoteCommands(CommandRegistry& registry);
// map: the strategy map of a run per agent, or of a local results file (map_command.cc).
void RegisterMapCommand(CommandRegistry& registry);
// recommend: the best strategy per agent at a task profile (recommend_command.cc).
void RegisterRecommendCommand(CommandRegistry& registry);
// `fleetmark compare` (compare_command.cc).
void RegisterCompareCommand(CommandRegistry& registry);
// `fleetmark changes list` (changes_command.cc).
void RegisterChangesCommand(CommandRegistry& registry);
// `fleetmark show FILE`: a results file as `runs show` shows a run (show_command.cc; no
// coordinator, so no connection flags).
void RegisterShowCommand(CommandRegistry& registry);

// What `submit` sends besides the plan (its flags; `recommend --measure --select` sets them).
struct SubmitPlanOptions {
  std::string select;  // a selector (checked by the caller)
  bool quick = false;
  std::string filter;
  absl::Duration queue_offline = absl::ZeroDuration();
};

// Submits `plan` as a run and prints "submitted run ID (plan NAME) to N agent(s): ..." on
// stderr (and the expiry with a queue_offline). The run as created, or the coordinator's
// error (ControlClient::CallError).
absl::StatusOr<v1::RunInfo> SubmitPlan(ControlClient& client, const v1::Plan& plan, const SubmitPlanOptions& options);

// Every remote command also takes the connection flags (remote_flags.h).
inline void RegisterRemoteCommands(CommandRegistry& registry) {
  registry.SetCommonFlags({"coordinator", "admin_token_file", "tls_ca_file", "tls_cert_file", "tls_key_file"});
  RegisterRunRemoteCommands(registry);
  RegisterFleetRemoteCommands(registry);
  RegisterResultsRemoteCommands(registry);
  RegisterMapCommand(registry);
  RegisterRecommendCommand(registry);
  RegisterCompareCommand(registry);
  RegisterChangesCommand(registry);
  registry.SetCommonFlags({});
  RegisterShowCommand(registry);
}

}  // namespace fleetmark::cli
