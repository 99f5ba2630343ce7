#include "coordinator/service/hello_check.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "coordinator/scheduler/same_host.h"
#include "engine/common/message_text.h"
#include "engine/common/name_rule.h"
#include "engine/common/text.h"

namespace fleetmark::service {
namespace {

bool ValidAgentName(const std::string& name) { return IsName(name); }

}  // namespace

absl::Status CheckHello(const v1::Hello& hello) {
  if (hello.protocol_version() < kMinProtocolVersion || hello.protocol_version() > kMaxProtocolVersion) {
    const bool too_old = hello.protocol_version() < kMinProtocolVersion;
    return absl::FailedPreconditionError(absl::StrCat(
        "protocol version ", hello.protocol_version(), " not in [", kMinProtocolVersion, ", ", kMaxProtocolVersion,
        "]: ", too_old ? "agent too old, upgrade the agent" : "agent too new, upgrade the coordinator"));
  }
  // Every string of the hello (labels, host fields, ...): UTF-8, length, no control
  // characters. Found by reflection, so fields added later are checked too.
  if (absl::Status text = CheckMessageText(hello, "hello", HelloTextRules()); !text.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("hello refused: ", text.message()));
  }
  if (!ValidAgentName(hello.agent_name())) {
    return absl::InvalidArgumentError(NameRuleMessage("hello.agent_name", hello.agent_name()));
  }
  // Selectors match labels as label:<key>=<value>: a key must be one the agent's
  // --labels could have given.
  for (const auto& [key, value] : hello.labels()) {
    if (!IsAgentLabelKey(key)) {
      return absl::InvalidArgumentError(
          absl::StrCat("hello refused: hello.labels key \"", EscapeForTerminal(key, 64), "\": ", kAgentLabelKeyForm));
    }
  }
  if (!hello.running_job_id().empty() && !IsUuid(hello.running_job_id())) {
    return absl::InvalidArgumentError(
        absl::StrCat("hello refused: hello.running_job_id: empty or a UUID (8-4-4-4-12 hex digits), got \"",
                     EscapeForTerminal(hello.running_job_id(), 64), "\""));
  }
  if (!hello.instance_id().empty() && !IsUuid(hello.instance_id())) {
    return absl::InvalidArgumentError(
        absl::StrCat("hello refused: hello.instance_id: empty or a UUID (8-4-4-4-12 hex digits), got \"",
                     EscapeForTerminal(hello.instance_id(), 64), "\""));
  }
  // The same-host rule compares these (coordinator/scheduler/same_host.h).
  for (const auto& [field, value] :
       {std::pair<const char*, const std::string*>{"machine_id", &hello.machine_id()}, {"boot_id", &hello.boot_id()}}) {
    if (!value->empty() && !scheduler::IsHostIdText(*value)) {
      return absl::InvalidArgumentError(absl::StrCat("hello refused: hello.", field,
                                                     ": empty or 1 to 64 of [0-9a-f-], got \"",
                                                     EscapeForTerminal(*value, 64), "\""));
    }
  }
  return absl::OkStatus();
}

}  // namespace fleetmark::service
