// `fleetmark agents list|remove|release`, `schedules create|list|delete`, `tokens create|list|revoke`.
#include <iostream>
#include <map>
#include <optional>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "coordinator/cli/plan_loader.h"
#include "coordinator/cli/remote_client.h"
#include "coordinator/cli/remote_commands.h"
#include "coordinator/cli/remote_render.h"
#include "coordinator/cli/run_flags.h"
#include "coordinator/scheduler/same_host.h"
#include "coordinator/service/selector.h"
#include "engine/common/text.h"
#include "engine/report/text_table.h"

namespace fleetmark::cli {
namespace {

// "P:8x4.2GHz E:4x3.0GHz" from the host's core classes (kinds when no classes).
std::string CoreKinds(const v1::HostInfo& host) {
  const auto& kinds = host.core_classes_size() > 0 ? host.core_classes() : host.core_kinds();
  std::vector<std::string> parts;
  for (const v1::CoreKind& kind : kinds) {
    std::string part = absl::StrCat(kind.name().empty() ? "?" : kind.name(), ":", kind.cores(), "c");
    if (kind.max_frequency_khz() > 0) {
      absl::StrAppend(&part, "@", absl::StrFormat("%.1f", kind.max_frequency_khz() / 1e6), "GHz");
    }
    parts.push_back(part);
  }
  return parts.empty() ? "-" : absl::StrJoin(parts, " ");
}

std::string Ago(int64_t unix_ns) {
  if (unix_ns <= 0) return "never";
  const absl::Duration ago = absl::Now() - absl::FromUnixNanos(unix_ns);
  if (ago < absl::Minutes(2)) return absl::StrCat(absl::ToInt64Seconds(ago), "s ago");
  if (ago < absl::Hours(2)) return absl::StrCat(absl::ToInt64Minutes(ago), "m ago");
  return FormatUnixNs(unix_ns);
}

constexpr char kAgentsListUsage[] = "fleetmark agents list [--select EXPR] [--all]";

// "1.3% (14 nights)", or "-" with no score yet ("- (2 nights)" once some nights exist).
std::string NoiseCell(const v1::AgentInfo& agent) {
  const std::string nights = absl::StrCat(agent.noise_nights(), agent.noise_nights() == 1 ? " night" : " nights");
  if (!agent.has_noise_percent()) return agent.noise_nights() > 0 ? absl::StrCat("- (", nights, ")") : "-";
  return absl::StrFormat("%.1f%% (%s)", agent.noise_percent(), nights);
}

// The host's short id (coordinator/scheduler/same_host.h) and the other agents on it:
// "0f1e2d3c shared with a2, a3", "+ exclusive cpus" when the agent may run a job beside
// them (--exclusive_cpus); "-" when the agent sent no host identity.
std::string HostCell(const v1::AgentInfo& agent) {
  std::string cell = scheduler::ShortHostId({agent.machine_id(), agent.boot_id()});
  if (cell.empty()) return "-";
  if (agent.same_host_as_size() > 0) absl::StrAppend(&cell, " shared with ", absl::StrJoin(agent.same_host_as(), ", "));
  if (agent.exclusive_cpus()) absl::StrAppend(&cell, " + exclusive cpus");
  return cell;
}

// The agent's labels as "k=v" joined by ",", sorted by key (the Fleet page's labels
// column); "-" without labels.
std::string LabelsCell(const v1::AgentInfo& agent) {
  std::map<std::string, std::string> sorted(agent.labels().begin(), agent.labels().end());
  if (sorted.empty()) return "-";
  return absl::StrJoin(sorted, ",", absl::PairFormatter("="));
}

absl::StatusOr<int> AgentsList(const std::vector<std::string>& args) {
  if (!args.empty()) return UsageError(kAgentsListUsage, "agents list takes no arguments");
  if (absl::Status select = CheckSelectFlag(/*required=*/false); !select.ok()) {
    return UsageError(kAgentsListUsage, std::string(select.message()));
  }
  v1::ListAgentsRequest request;
  request.set_selector(absl::GetFlag(FLAGS_select));
  request.set_include_removed(absl::GetFlag(FLAGS_all));
  v1::ListAgentsResponse response;
  if (absl::Status called = CallControl(&v1::ControlService::Stub::ListAgents, request, &response, "agents list");
      !called.ok()) {
    return called;
  }
  report::TextTable table({{"name"},
                           {"state"},
                           {"host"},
                           {"arch"},
                           {"cpu model"},
                           {"cores/threads", report::Align::kRight},
                           {"core kinds"},
                           {"last seen"},
                           {"job"},
                           {"noise", report::Align::kRight},
                           {"health"},
                           {"since"},
                           {"reason"},
                           {"labels"}});
  // Cells come from agents' hellos: the table escapes control characters (TextTable).
  for (const v1::AgentInfo& agent : response.agents()) {
    const v1::HostInfo& host = agent.host();
    const std::string state =
        agent.removed_unix_ns() > 0 ? absl::StrCat("removed ", FormatUnixNs(agent.removed_unix_ns())) : agent.state();
    table.AddRow({agent.name(), state, HostCell(agent), ArchCell(host), host.cpu_model(),
                  absl::StrCat(host.physical_cores(), "/", host.logical_cpus()), CoreKinds(host),
                  Ago(agent.last_seen_unix_ns()), agent.running_job_id().empty() ? "-" : agent.running_job_id(),
                  NoiseCell(agent), agent.health().empty() ? "ok" : agent.health(),
                  agent.quarantined_unix_ns() > 0 ? FormatUnixNs(agent.quarantined_unix_ns()) : "-",
                  agent.quarantine_reason().empty() ? "-" : agent.quarantine_reason(), LabelsCell(agent)});
  }
  std::cout << table.Render();
  return kExitOk;
}

absl::StatusOr<int> AgentsRemove(const std::vector<std::string>& args) {
  static const char kUsage[] = "fleetmark agents remove NAME";
  if (args.size() != 1) return UsageError(kUsage, "agents remove takes one agent name");
  v1::RemoveAgentRequest request;
  request.set_name(args[0]);
  v1::RemoveAgentResponse response;
  if (absl::Status called = CallControl(&v1::ControlService::Stub::RemoveAgent, request, &response,
                                        absl::StrCat("agents remove ", EscapeForTerminal(args[0])));
      !called.ok()) {
    return called;
  }
  std::cout << "removed agent " << EscapeForTerminal(args[0]) << " (" << response.agent_id()
            << "): its results are kept (`agents list --all` still shows it), its credential no longer works, and "
               "the name may be enrolled again as a new agent";
  if (response.failed_jobs_size() > 0) std::cout << "; " << response.failed_jobs_size() << " unfinished jobs failed";
  std::cout << "\n";
  return kExitOk;
}

absl::StatusOr<int> AgentsRelease(const std::vector<std::string>& args) {
  static const char kUsage[] = "fleetmark agents release NAME";
  if (args.size() != 1) return UsageError(kUsage, "agents release takes one agent name");
  v1::ReleaseAgentRequest request;
  request.set_name(args[0]);
  v1::ReleaseAgentResponse response;
  if (absl::Status called = CallControl(&v1::ControlService::Stub::ReleaseAgent, request, &response,
                                        absl::StrCat("agents release ", EscapeForTerminal(args[0])));
      !called.ok()) {
    return called;
  }
  std::cout << "released agent " << EscapeForTerminal(args[0]) << " from quarantine (since "
            << FormatUnixNs(response.quarantined_unix_ns()) << ": " << EscapeForTerminal(response.reason())
            << "): selectors pick it again; its calibration nights start a new baseline\n";
  return kExitOk;
}

constexpr char kSchedulesCreateUsage[] =
    "fleetmark schedules create NAME PLAN --cron 'M H DOM MON DOW' --select EXPR|all [--quick] [--filter REGEX]";

absl::StatusOr<int> SchedulesCreate(const std::vector<std::string>& args) {
  const char* kUsage = kSchedulesCreateUsage;
  if (args.size() != 2) return UsageError(kUsage, "schedules create takes a name and a plan file");
  if (absl::Status cron = CheckCronFlag(); !cron.ok()) {
    return UsageError(kUsage, std::string(cron.message()));
  }
  if (absl::Status select = CheckSelectFlag(/*required=*/true); !select.ok()) {
    return UsageError(kUsage, std::string(select.message()));
  }
  absl::StatusOr<v1::Plan> plan = LoadValidPlan(args[1]);
  if (!plan.ok()) return FleetmarkError(absl::InvalidArgumentError(plan.status().message()));
  // As submit: the filter must compile and select a case of the plan (exit 2).
  if (absl::Status cases = CheckFilterFlag(*plan); !cases.ok()) {
    return FleetmarkError(absl::InvalidArgumentError(cases.message()));
  }
  v1::CreateScheduleRequest request;
  v1::Schedule* schedule = request.mutable_schedule();
  schedule->set_name(args[0]);
  schedule->set_cron(absl::GetFlag(FLAGS_cron));
  *schedule->mutable_plan() = *plan;
  schedule->set_selector(absl::GetFlag(FLAGS_select));
  schedule->set_quick(absl::GetFlag(FLAGS_quick));
  schedule->set_filter(absl::GetFlag(FLAGS_filter));
  v1::Schedule created;
  if (absl::Status called =
          CallControl(&v1::ControlService::Stub::CreateSchedule, request, &created, "schedules create");
      !called.ok()) {
    return called;
  }
  std::cout << "schedule " << created.name() << " (" << created.cron() << " UTC) next fires "
            << FormatUnixNs(created.next_fire_unix_ns()) << "\n";
  return kExitOk;
}

absl::StatusOr<int> SchedulesList(const std::vector<std::string>& args) {
  if (!args.empty()) return UsageError("fleetmark schedules list", "schedules list takes no arguments");
  v1::ListSchedulesResponse response;
  if (absl::Status called = CallControl(&v1::ControlService::Stub::ListSchedules, v1::ListSchedulesRequest(), &response,
                                        "schedules list");
      !called.ok()) {
    return called;
  }
  report::TextTable table({{"name"},
                           {"state"},
                           {"cron (UTC)"},
                           {"plan"},
                           {"quick"},
                           {"filter"},
                           {"next fire"},
                           {"selector"},
                           {"last fire"}});
  for (const v1::Schedule& s : response.schedules()) {
    // The last fire: its slot and outcome ("run <id>" or why it was skipped).
    const std::string last = s.last_fire_slot_unix_ns() == 0
                                 ? "-"
                                 : absl::StrCat(FormatUnixNs(s.last_fire_slot_unix_ns()), " ", s.last_fire_outcome());
    table.AddRow({s.name(), s.paused() ? "paused" : "active", s.cron(), s.plan().name(), s.quick() ? "yes" : "no",
                  s.filter().empty() ? "-" : s.filter(),
                  s.paused() ? "- (paused)" : FormatUnixNs(s.next_fire_unix_ns()), service::SelectorText(s.selector()),
                  last});
  }
  std::cout << table.Render();
  return kExitOk;
}

absl::StatusOr<int> SchedulesDelete(const std::vector<std::string>& args) {
  if (args.size() != 1) return UsageError("fleetmark schedules delete NAME", "schedules delete takes one name");
  v1::DeleteScheduleRequest request;
  request.set_name(args[0]);
  v1::Empty empty;
  if (absl::Status called = CallControl(&v1::ControlService::Stub::DeleteSchedule, request, &empty, "schedules delete");
      !called.ok()) {
    return called;
  }
  std::cout << "deleted schedule " << args[0] << "\n";
  return kExitOk;
}

// `schedules pause NAME` / `schedules resume NAME`.
absl::StatusOr<int> SchedulesSetPaused(const std::vector<std::string>& args, bool paused) {
  const std::string command = paused ? "schedules pause" : "schedules resume";
  if (args.size() != 1) return UsageError(absl::StrCat("fleetmark ", command, " NAME"), command + " takes one name");
  v1::SetSchedulePausedRequest request;
  request.set_name(args[0]);
  request.set_paused(paused);
  v1::Schedule schedule;
  if (absl::Status called =
          CallControl(&v1::ControlService::Stub::SetSchedulePaused, request, &schedule, command.c_str());
      !called.ok()) {
    return called;
  }
  if (paused) {
    std::cout << "paused schedule " << args[0] << " (it does not fire until: fleetmark schedules resume " << args[0]
              << ")\n";
  } else {
    std::cout << "resumed schedule " << args[0] << ", next fires " << FormatUnixNs(schedule.next_fire_unix_ns())
              << "\n";
  }
  return kExitOk;
}

absl::StatusOr<int> SchedulesRun(const std::vector<std::string>& args) {
  if (args.size() != 1) return UsageError("fleetmark schedules run NAME", "schedules run takes one name");
  v1::RunScheduleRequest request;
  request.set_name(args[0]);
  v1::RunInfo run;
  if (absl::Status called = CallControl(&v1::ControlService::Stub::RunSchedule, request, &run, "schedules run");
      !called.ok()) {
    return called;
  }
  std::cout << run.run_id() << "\n";
  return kExitOk;
}

absl::StatusOr<int> TokensCreate(const std::vector<std::string>& args) {
  if (!args.empty())
    return UsageError("fleetmark tokens create [--description TEXT]", "tokens create takes no arguments");
  v1::CreateTokenRequest request;
  request.set_description(absl::GetFlag(FLAGS_description));
  v1::CreateTokenResponse response;
  if (absl::Status called = CallControl(&v1::ControlService::Stub::CreateToken, request, &response, "tokens create");
      !called.ok()) {
    return called;
  }
  std::cerr << "enrollment token " << response.token_id()
            << " (shown once; give it to agents with --token_file, revoke with `fleetmark tokens revoke "
            << response.token_id() << "`):\n";
  std::cout << response.token() << "\n";
  return kExitOk;
}

absl::StatusOr<int> TokensRevoke(const std::vector<std::string>& args) {
  if (args.size() != 1) return UsageError("fleetmark tokens revoke TOKEN_ID", "tokens revoke takes one token id");
  absl::StatusOr<ControlClient> client = ClientFromFlags();
  if (!client.ok()) return client.status();
  v1::RevokeTokenRequest request;
  request.set_token_id(args[0]);
  v1::Empty empty;
  auto context = client->Context();
  grpc::Status status = client->stub().RevokeToken(context.get(), request, &empty);
  if (!status.ok()) {
    const absl::Status error = client->CallError(absl::StrCat("tokens revoke ", args[0]), status);
    if (status.error_code() != grpc::StatusCode::NOT_FOUND) return error;
    return AppendToError(error, "\n  (`fleetmark tokens list` shows the token ids)");
  }
  std::cout << "revoked " << args[0] << " (agents enrolled with it are disconnected now and refused from now on)\n";
  return kExitOk;
}

absl::StatusOr<int> TokensList(const std::vector<std::string>& args) {
  if (!args.empty()) return UsageError("fleetmark tokens list", "tokens list takes no arguments");
  v1::ListTokensResponse response;
  if (absl::Status called =
          CallControl(&v1::ControlService::Stub::ListTokens, v1::ListTokensRequest(), &response, "tokens list");
      !called.ok()) {
    return called;
  }
  report::TextTable table({{"id"}, {"description"}, {"created"}, {"revoked"}, {"agents", report::Align::kRight}});
  for (const v1::TokenInfo& token : response.tokens()) {
    table.AddRow({token.token_id(), token.description().empty() ? "-" : token.description(),
                  FormatUnixNs(token.created_unix_ns()), FormatUnixNs(token.revoked_unix_ns()),
                  absl::StrCat(token.agents())});
  }
  std::cout << table.Render();
  return kExitOk;
}

}  // namespace

void RegisterFleetRemoteCommands(CommandRegistry& registry) {
  registry.Add(
      {.name = "agents list",
       .summary =
           "list agents: state, host (agents sharing it), arch, CPU, cores/threads, core kinds, last seen, noise, "
           "health (--all: removed too)",
       .usage = kAgentsListUsage,
       .run = AgentsList});
  registry.Add({.name = "agents remove",
                .summary = "remove an agent (results kept; its credential stops working; the name may enroll again)",
                .usage = "fleetmark agents remove NAME",
                .run = AgentsRemove,
                .text_arguments = {"NAME"},
                .name_arguments = {"NAME"}});
  registry.Add({.name = "agents release",
                .summary = "end an agent's quarantine (selectors pick it again; its noise baseline restarts)",
                .usage = "fleetmark agents release NAME",
                .run = AgentsRelease,
                .text_arguments = {"NAME"},
                .name_arguments = {"NAME"}});
  registry.Add({.name = "schedules create",
                .summary = "run a plan on a cron schedule (UTC)",
                .usage = kSchedulesCreateUsage,
                .run = SchedulesCreate,
                .text_arguments = {"NAME"},
                .name_arguments = {"NAME"}});
  registry.Add({.name = "schedules list",
                .summary = "list schedules and their next fire time",
                .usage = "fleetmark schedules list",
                .run = SchedulesList});
  registry.Add({.name = "schedules delete",
                .summary = "delete a schedule",
                .usage = "fleetmark schedules delete NAME",
                .run = SchedulesDelete,
                .text_arguments = {"NAME"},
                .name_arguments = {"NAME"}});
  registry.Add({.name = "schedules pause",
                .summary = "pause a schedule: it does not fire until resumed",
                .usage = "fleetmark schedules pause NAME",
                .run = [](const std::vector<std::string>& args) { return SchedulesSetPaused(args, true); },
                .text_arguments = {"NAME"},
                .name_arguments = {"NAME"}});
  registry.Add({.name = "schedules resume",
                .summary = "resume a paused schedule (from its next slot)",
                .usage = "fleetmark schedules resume NAME",
                .run = [](const std::vector<std::string>& args) { return SchedulesSetPaused(args, false); },
                .text_arguments = {"NAME"},
                .name_arguments = {"NAME"}});
  registry.Add({.name = "schedules run",
                .summary = "fire a schedule now, once (paused or not); prints the run id",
                .usage = "fleetmark schedules run NAME",
                .run = SchedulesRun,
                .text_arguments = {"NAME"},
                .name_arguments = {"NAME"}});
  registry.Add({.name = "tokens create",
                .summary = "create an agent enrollment token (printed once)",
                .usage = "fleetmark tokens create [--description TEXT]",
                .run = TokensCreate});
  registry.Add({.name = "tokens list",
                .summary = "list enrollment tokens: id, description, created, revoked, agents enrolled",
                .usage = "fleetmark tokens list",
                .run = TokensList});
  registry.Add({.name = "tokens revoke",
                .summary = "revoke an enrollment token and the agents enrolled with it",
                .usage = "fleetmark tokens revoke TOKEN_ID",
                .run = TokensRevoke,
                .text_arguments = {"TOKEN_ID"},
                .name_arguments = {"TOKEN_ID"}});
}

}  // namespace fleetmark::cli
