// What the agent says about itself: its identity (host, engine version, registry
// names) and the Hello that opens every session (with the stored credential or the
// enrollment token).
//
//   AgentIdentity identity = BuildIdentity(host);
//   bool used_credential = false;
//   FLEETMARK_ASSIGN_OR_RETURN(v1::AgentMessage hello,
//                              MakeHello(options, identity, open_job_id, &used_credential));
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/options.h"
#include "fleetmark/v1/agent.pb.h"
#include "fleetmark/v1/host.pb.h"

namespace fleetmark::agent {

// What the agent says about itself in the hello.
struct AgentIdentity {
  fleetmark::v1::HostInfo host;
  std::string engine_version;
  std::vector<std::string> strategies;
  std::vector<std::string> workloads;
  std::vector<std::string> scenarios;
  // This agent process's id in every hello (Hello.instance_id): a UUID that
  // Agent::Create draws when empty, so a copy of the credential file used by another
  // process is told apart from this process reconnecting.
  std::string instance_id;
  // The host's machine id and boot id (agent/host_identity.h; "" = unknown):
  // Hello.machine_id, boot_id.
  std::string machine_id;
  std::string boot_id;
};

// The identity of this build: engine version and the registries' names
// (engine/common/registry.h, engine/strategies/ and engine/scenarios/registry.h), with `host` as given (strings the
// coordinator would refuse are escaped or cut, with a note).
AgentIdentity BuildIdentity(fleetmark::v1::HostInfo host);

// The Hello of a new session. `open_job_id` is the running job, else a finished job
// whose report is unconfirmed, else "" (Hello.running_job_id). Presents the credential
// stored in options.spool_dir (sets *used_credential), else the enrollment token read
// from options.token_file at this call. Errors: FailedPrecondition when there is
// neither; the token file's errors (NotFound/PermissionDenied naming it); InvalidArgument
// naming the field when the coordinator's text rules (HelloTextRules) would refuse the
// hello. Thread-compatible (reads files).
absl::StatusOr<fleetmark::v1::AgentMessage> MakeHello(const AgentOptions& options, const AgentIdentity& identity,
                                                      const std::string& open_job_id, bool* used_credential);

}  // namespace fleetmark::agent
