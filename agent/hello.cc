#include "agent/hello.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "agent/credential_store.h"
#include "agent/log.h"
#include "engine/common/message_text.h"
#include "engine/common/registry.h"
#include "engine/scenarios/registry.h"
#include "engine/common/secret_file.h"
#include "engine/common/status_macros.h"
#include "engine/strategies/registry.h"
#include "engine/topology/host.h"

namespace fleetmark::agent {
namespace {

// OK if the coordinator's text rules (HelloTextRules) admit `hello`; else
// InvalidArgument naming the field.
absl::Status CheckHello(const fleetmark::v1::Hello& hello) {
  // The coordinator's own rules: a hello it would refuse is a local configuration
  // error (InvalidArgument: exit 2), not something to retry.
  absl::Status text = CheckMessageText(hello, "hello", HelloTextRules());
  if (text.ok()) return text;
  return absl::InvalidArgumentError(absl::StrCat(text.message(), " (the coordinator would refuse this hello)"));
}

}  // namespace

AgentIdentity BuildIdentity(fleetmark::v1::HostInfo host) {
  AgentIdentity identity;
  identity.engine_version = FLEETMARK_ENGINE_VERSION;
  if (host.engine_version().empty()) host.set_engine_version(identity.engine_version);
  // Detected text the coordinator would refuse (a control character in a device-tree
  // string, an over-long CPU model) is escaped and cut rather than stop the agent.
  engine::SanitizeHostText(host);
  identity.host = std::move(host);
  for (const auto& strategy : engine::kStrategies) {
    identity.strategies.emplace_back(strategy.name);
  }
  for (const auto& workload : engine::kWorkloads) identity.workloads.emplace_back(workload.name);
  for (const auto& scenario : engine::kScenarios) identity.scenarios.emplace_back(scenario.name);
  return identity;
}

absl::StatusOr<fleetmark::v1::AgentMessage> MakeHello(const AgentOptions& options, const AgentIdentity& identity,
                                                      const std::string& open_job_id, bool* used_credential) {
  fleetmark::v1::AgentMessage message;
  fleetmark::v1::Hello* hello = message.mutable_hello();
  hello->set_protocol_version(fleetmark::v1::PROTOCOL_VERSION_1);
  hello->set_agent_name(options.name);
  *hello->mutable_host() = identity.host;
  hello->set_engine_version(identity.engine_version);
  for (const std::string& s : identity.strategies) hello->add_strategies(s);
  for (const std::string& w : identity.workloads) hello->add_workloads(w);
  for (const std::string& s : identity.scenarios) hello->add_scenarios(s);
  for (const auto& [key, value] : options.labels) (*hello->mutable_labels())[key] = value;
  // The running job, or else a finished job whose JobFinished may not have been
  // received: the coordinator keeps it ours (ResumeJob) so the resent JobFinished
  // can close it, or answers with a cancellation if it has ended meanwhile.
  hello->set_running_job_id(open_job_id);
  hello->set_instance_id(identity.instance_id);
  hello->set_machine_id(identity.machine_id);
  hello->set_boot_id(identity.boot_id);
  hello->set_exclusive_cpus(options.exclusive_cpus);
  hello->add_capabilities(fleetmark::v1::CAPABILITY_RESULT_ACKS);  // Session reads ResultAcks

  absl::StatusOr<std::optional<StoredCredential>> stored = LoadCredential(options.spool_dir);
  if (!stored.ok()) {
    Log(LogLevel::kWarning, absl::StrCat("ignoring the stored credential: ", stored.status().message()));
  } else if (stored->has_value()) {
    hello->set_agent_credential((*stored)->credential);
    *used_credential = true;
    FLEETMARK_RETURN_IF_ERROR(CheckHello(*hello));
    return message;
  }
  *used_credential = false;
  if (options.token_file.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("token_file: no stored credential in ", options.spool_dir, " and no --token_file to enroll with"));
  }
  FLEETMARK_ASSIGN_OR_RETURN(std::string token, ReadSecretFile("token_file", options.token_file));
  hello->set_enrollment_token(std::move(token));
  FLEETMARK_RETURN_IF_ERROR(CheckHello(*hello));
  return message;
}

}  // namespace fleetmark::agent
