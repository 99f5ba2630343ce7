#include "coordinator/service/run_builder.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "coordinator/scheduler/cron.h"
#include "coordinator/service/field_bytes.h"
#include "coordinator/service/run_cases.h"
#include "engine/common/message_limits.h"
#include "engine/common/status_macros.h"
#include "engine/plan/plan.h"
#include "fleetmark/v1/agent.pb.h"

namespace fleetmark::service {

size_t JobAssignmentBytes(const v1::Plan& plan, bool quick, const std::string& filter) {
  // The assignment without its plan (ids are UUIDs, 36 characters), then the plan's
  // field added by size: a plan of up to 64 MiB is not copied to be measured.
  v1::JobAssignment assignment;
  assignment.set_job_id(std::string(36, 'f'));
  assignment.set_run_id(std::string(36, 'f'));
  assignment.set_quick(quick);
  assignment.set_filter(filter);
  assignment.set_attempt(std::numeric_limits<uint32_t>::max());
  const size_t assignment_bytes = assignment.ByteSizeLong() + FieldBytes(plan.ByteSizeLong());
  return FieldBytes(assignment_bytes);  // CoordinatorMessage.assignment
}

size_t MaxJobAssignmentBytes() {
  return static_cast<size_t>(std::min(kCoordinatorMaxMessageBytes, kAgentMaxMessageBytes));
}

absl::Status CheckPlanDeliverable(const v1::Plan& plan, bool quick, const std::string& filter, const std::string& field,
                                  size_t limit_bytes) {
  const size_t bytes = JobAssignmentBytes(plan, quick, filter);
  if (bytes <= limit_bytes) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      field, ": a job of this plan is ", bytes, " bytes serialized, over the agent stream's message limit of ",
      FormatMessageLimit(limit_bytes), " (", limit_bytes, " bytes): no agent could receive it; split the plan"));
}

absl::StatusOr<CheckedRun> CheckRun(const v1::Plan& plan, bool quick, const std::string& filter,
                                    const std::string& selector, absl::string_view field) {
  const std::string refused = absl::StrCat(field, " refused: ");
  absl::Status valid = engine::ValidatePlan(plan);
  if (!valid.ok()) return absl::InvalidArgumentError(absl::StrCat(refused, valid.message()));
  FLEETMARK_RETURN_IF_ERROR(CheckPlanDeliverable(plan, quick, filter, absl::StrCat(refused, field)));
  CheckedRun checked;
  // The filter must compile and select a case (InvalidArgument naming --filter).
  FLEETMARK_ASSIGN_OR_RETURN(checked.case_ids, SelectedCaseIds(plan, quick, filter));
  FLEETMARK_ASSIGN_OR_RETURN(checked.selector, Selector::Parse(selector));
  return checked;
}

RunBuilder::RunBuilder(store::AgentStore& store, const Clock& clock, RunBuilderOptions options)
    : store_(store), clock_(clock), options_(std::move(options)) {}

absl::StatusOr<store::NewRun> RunBuilder::Submitted(const v1::SubmitRunRequest& request) const {
  return Build(request.plan(), request.selector(), request.quick(), request.filter(),
               request.submitted_by().empty() ? "cli" : request.submitted_by(),
               absl::Milliseconds(request.queue_offline_ms()));
}

absl::StatusOr<store::NewRun> RunBuilder::Scheduled(const v1::Schedule& schedule) const {
  return Build(schedule.plan(), schedule.selector(), schedule.quick(), schedule.filter(),
               absl::StrCat("schedule:", schedule.name()), absl::ZeroDuration());
}

absl::StatusOr<absl::Time> RunBuilder::CheckSchedule(const v1::Schedule& schedule) const {
  FLEETMARK_ASSIGN_OR_RETURN(scheduler::CronSchedule cron, scheduler::CronSchedule::Parse(schedule.cron()));
  FLEETMARK_RETURN_IF_ERROR(
      CheckRun(schedule.plan(), schedule.quick(), schedule.filter(), schedule.selector(), "schedule.plan").status());
  std::optional<absl::Time> next = cron.NextAfter(clock_.Now());
  if (!next) {
    return absl::InvalidArgumentError(
        absl::StrCat("schedule.cron \"", schedule.cron(), "\": never fires in the next 5 years"));
  }
  return *next;
}

absl::StatusOr<store::NewRun> RunBuilder::Build(const v1::Plan& plan, const std::string& selector, bool quick,
                                                const std::string& filter, std::string submitted_by,
                                                absl::Duration queue_offline) const {
  if (!plan.has_preconditions() && options_.default_preconditions.ByteSizeLong() > 0) {
    v1::Plan gated = plan;
    *gated.mutable_preconditions() = options_.default_preconditions;
    return Build(gated, selector, quick, filter, std::move(submitted_by), queue_offline);
  }
  const bool include_offline = queue_offline != absl::ZeroDuration();
  if (include_offline) FLEETMARK_RETURN_IF_ERROR(CheckQueueOffline(queue_offline, "queue_offline_ms"));
  FLEETMARK_ASSIGN_OR_RETURN(CheckedRun checked, CheckRun(plan, quick, filter, selector, "plan"));
  const Selector& parsed = checked.selector;
  store::NewRun run;
  size_t online = 0;
  std::vector<std::string> quarantined;  // selectable and matching, but skipped for their health
  std::vector<store::AgentSummary> agents;
  auto select = [&](std::vector<store::AgentSummary> listed) {
    agents = std::move(listed);
    online = 0;
    run.agent_ids.clear();
    quarantined.clear();
    for (const store::AgentSummary& agent : agents) {
      if (agent.online) ++online;
      if (!agent.online && !include_offline) continue;
      if (!parsed.Matches(agent.name, agent.profile->host, agent.profile->labels)) continue;
      if (parsed.AdmitsHealth(agent.quarantined)) {
        run.agent_ids.push_back(agent.agent_id);
      } else if (agent.quarantined) {
        quarantined.push_back(absl::StrCat(agent.name, " (", agent.quarantine_reason, ")"));
      }
    }
  };
  // A selector naming one agent reads that agent only (a submit listed all 10 000 agents
  // of a fleet for it: 37-46 ms); when it selects nothing, the whole listing gives the
  // refusal its counts.
  if (const std::optional<std::string> name = parsed.ExactName()) {
    FLEETMARK_ASSIGN_OR_RETURN(std::vector<store::AgentSummary> named, store_.ListAgentSummariesNamed(*name));
    select(std::move(named));
  }
  if (run.agent_ids.empty()) {
    FLEETMARK_ASSIGN_OR_RETURN(std::vector<store::AgentSummary> all, store_.ListAgentSummaries());
    select(std::move(all));
  }
  if (run.agent_ids.empty() && !quarantined.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "every ", include_offline ? "" : "online ", "agent matching selector \"", selector,
        "\" is quarantined: ", absl::StrJoin(quarantined, "; "),
        ". Release one with `fleetmark agents release NAME`, or add health=any to the selector to run on it anyway"));
  }
  if (run.agent_ids.empty() && include_offline) {
    return absl::FailedPreconditionError(absl::StrCat("no agent, online or offline, matches selector \"", selector,
                                                      "\" (", agents.size(), " agents known)"));
  }
  if (run.agent_ids.empty()) {
    return absl::FailedPreconditionError(absl::StrCat("no online agent matches selector \"", selector, "\" (",
                                                      agents.size(), " agents known, ", online, " online)"));
  }
  return NewRunOf(plan, selector, quick, filter, std::move(submitted_by), std::move(checked), std::move(run.agent_ids),
                  include_offline ? queue_offline : absl::ZeroDuration());
}

absl::StatusOr<store::NewRun> RunBuilder::OnAgent(const v1::Plan& plan, bool quick, const std::string& filter,
                                                  const std::string& agent_id, const std::string& agent_name,
                                                  std::string submitted_by, absl::Duration queue_expiry) const {
  const std::string selector = absl::StrCat("name=", agent_name);
  FLEETMARK_ASSIGN_OR_RETURN(CheckedRun checked, CheckRun(plan, quick, filter, selector, "plan"));
  return NewRunOf(plan, selector, quick, filter, std::move(submitted_by), std::move(checked), {agent_id}, queue_expiry);
}

store::NewRun RunBuilder::NewRunOf(const v1::Plan& plan, const std::string& selector, bool quick,
                                   const std::string& filter, std::string submitted_by, CheckedRun checked,
                                   std::vector<std::string> agent_ids, absl::Duration queue_expiry) const {
  store::NewRun run;
  run.plan = plan;
  run.selector = selector;
  run.quick = quick;
  run.filter = filter;
  run.submitted_by = std::move(submitted_by);
  run.agent_ids = std::move(agent_ids);
  run.max_attempts = options_.max_attempts;
  run.cases_total = static_cast<uint32_t>(checked.case_ids.size());  // after --quick and --filter
  run.case_ids = std::move(checked.case_ids);
  run.queue_expiry = queue_expiry;
  return run;
}

}  // namespace fleetmark::service
