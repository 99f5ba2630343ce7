// `fleetmark submit`, `runs list|show|cancel`.
#include <pwd.h>
#include <unistd.h>

#include <iostream>
#include <optional>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "coordinator/cli/case_outcomes.h"
#include "coordinator/cli/plan_loader.h"
#include "coordinator/cli/remote_client.h"
#include "coordinator/cli/remote_commands.h"
#include "coordinator/cli/remote_render.h"
#include "coordinator/cli/table_fit.h"
#include "coordinator/cli/run_flags.h"
#include "coordinator/cli/run_watch.h"
#include "coordinator/service/run_cases.h"
#include "coordinator/service/selector.h"
#include "engine/common/duration_text.h"
#include "engine/plan/case_filter.h"
#include "engine/plan/cost.h"
#include "engine/topology/cpu_limits.h"
#include "engine/plan/plan.h"
#include "engine/report/text_table.h"

namespace fleetmark::cli {
namespace {

constexpr char kSubmitUsage[] =
    "fleetmark submit PLAN --select EXPR|all [--quick] [--filter REGEX] [--queue_offline=DURATION] "
    "[--wait [--timeout DURATION]]";

// Live progress per agent until the run ends (through coordinator restarts, up to
// `timeout`); then its results tables and the outcome counts (as `fleetmark run` prints
// them). Exit code: a done run's cases decide as for a local `fleetmark run`
// (ExitCodeForOutcomes: 3 when a case failed, else 0; resource_exhausted and
// unsupported are outcomes, not failures); 1 if the run failed or was cancelled; the
// watch's error when it gave up (WatchResult::error).
absl::StatusOr<int> WaitAndShow(ControlClient& client, const std::string& run_id, absl::Duration timeout,
                                std::optional<engine::PlanCost> cost) {
  WatchResult watched = WatchRunUntilEnded(client, run_id, {.timeout = timeout, .cost = std::move(cost)});
  if (!watched.ended) return watched.error;
  v1::ExportResultsResponse exported;
  const grpc::Status status = client.FetchResults(run_id, "", std::chrono::seconds(120), &exported);
  if (!status.ok()) return client.CallError("fetching results", status);
  absl::StatusOr<std::string> tables = ResultTables(exported, FittedTableOptions(absl::GetFlag(FLAGS_wide)));
  if (!tables.ok()) return FleetmarkError(absl::InternalError(tables.status().message()));
  std::cout << RunSummary(exported.run()) << "\n\n" << *tables;
  const CaseOutcomes outcomes = CountOutcomes(exported.results());
  std::cerr << "fleetmark submit: " << RunCasesLine(exported) << "\n";
  if (exported.run().status() != "done") return kExitFailure;
  return ExitCodeForOutcomes(outcomes);
}

}  // namespace

// Who submits: $USER, else the effective user's login name, else the host name.
std::string Submitter() {
  if (const char* user = std::getenv("USER"); user != nullptr && *user != '\0') return user;
  if (const passwd* entry = getpwuid(geteuid()); entry != nullptr && entry->pw_name != nullptr) {
    return entry->pw_name;
  }
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) == 0 && host[0] != '\0') return absl::StrCat("@", host);
  return "unknown";
}

absl::StatusOr<v1::RunInfo> SubmitPlan(ControlClient& client, const v1::Plan& plan, const SubmitPlanOptions& options) {
  v1::SubmitRunRequest request;
  *request.mutable_plan() = plan;
  request.set_selector(options.select);
  request.set_quick(options.quick);
  request.set_filter(options.filter);
  request.set_submitted_by(absl::StrCat("cli:", Submitter()));
  request.set_queue_offline_ms(absl::ToInt64Milliseconds(options.queue_offline));
  v1::SubmitRunResponse response;
  auto context = client.Context();
  grpc::Status status = client.stub().SubmitRun(context.get(), request, &response);
  if (!status.ok()) return client.CallError("submit", status);
  std::vector<std::string> agents;
  for (const v1::JobInfo& job : response.run().jobs()) agents.push_back(job.agent_name());
  std::cerr << "submitted run " << response.run().run_id() << " (plan " << plan.name() << ") to " << agents.size()
            << " agent(s): " << absl::StrJoin(agents, ", ") << "\n";
  if (options.queue_offline != absl::ZeroDuration()) {
    std::cerr << "jobs their agents have not taken by "
              << FormatUnixNs(response.run().created_unix_ns() + absl::ToInt64Nanoseconds(options.queue_offline))
              << " fail as expired (--queue_offline=" << RoundedDuration(options.queue_offline) << ")\n";
  }
  return response.run();
}

namespace {

// What the run will cost on each device (engine/plan/cost.h): the selected cases under
// --quick and --filter (both checked already), said before anything is sent; the
// watch's ETA starts from it (nullopt: the cases could not be selected).
std::optional<engine::PlanCost> PrintSubmitCost(const v1::Plan& plan) {
  const bool quick = absl::GetFlag(FLAGS_quick);
  absl::StatusOr<std::vector<v1::CaseSpec>> selected = engine::SelectCases(plan, quick, absl::GetFlag(FLAGS_filter));
  if (!selected.ok()) return std::nullopt;
  const engine::PlanCost cost = engine::EstimatePlanCost(plan, quick, *selected, engine::EffectiveCpuCount());
  std::cerr << "fleetmark submit: " << engine::PlanCostText(cost) << "\n";
  for (const std::string& warning : {engine::RepetitionOverrunWarning(cost), engine::LongPlanWarning(cost)}) {
    if (!warning.empty()) std::cerr << "fleetmark submit: warning: " << warning << "\n";
  }
  return cost;
}

absl::StatusOr<int> Submit(const std::vector<std::string>& args) {
  if (args.size() != 1) return UsageError(kSubmitUsage, "submit takes exactly one plan file");
  if (absl::Status select = CheckSelectFlag(/*required=*/true); !select.ok()) {
    return UsageError(kSubmitUsage, std::string(select.message()));
  }
  absl::StatusOr<absl::Duration> timeout = TimeoutFromFlag();
  if (!timeout.ok()) return UsageError(kSubmitUsage, std::string(timeout.status().message()));
  if (*timeout != absl::InfiniteDuration() && !absl::GetFlag(FLAGS_wait)) {
    return UsageError(kSubmitUsage, "--timeout applies to --wait: add --wait, or drop --timeout");
  }
  const absl::Duration queue_offline = absl::GetFlag(FLAGS_queue_offline);
  if (queue_offline != absl::ZeroDuration()) {
    if (absl::Status valid = service::CheckQueueOffline(queue_offline); !valid.ok()) {
      return UsageError(kSubmitUsage, std::string(valid.message()));
    }
  }
  absl::StatusOr<v1::Plan> plan = LoadValidPlan(args[0]);
  if (!plan.ok()) return FleetmarkError(absl::InvalidArgumentError(plan.status().message()));
  // The filter must compile and match a case before anything is sent (the coordinator
  // checks it again): a run no agent can execute is a usage error.
  if (absl::Status cases = CheckFilterFlag(*plan); !cases.ok()) {
    return FleetmarkError(absl::InvalidArgumentError(cases.message()));
  }
  std::optional<engine::PlanCost> cost = PrintSubmitCost(*plan);
  absl::StatusOr<ControlClient> client = ClientFromFlags();
  if (!client.ok()) return client.status();
  absl::StatusOr<v1::RunInfo> run = SubmitPlan(*client, *plan,
                                               {.select = absl::GetFlag(FLAGS_select),
                                                .quick = absl::GetFlag(FLAGS_quick),
                                                .filter = absl::GetFlag(FLAGS_filter),
                                                .queue_offline = queue_offline});
  if (!run.ok()) return run.status();
  if (!absl::GetFlag(FLAGS_wait)) {
    std::cout << run->run_id() << "\n";
    return kExitOk;
  }
  return WaitAndShow(*client, run->run_id(), *timeout, std::move(cost));
}

absl::StatusOr<int> RunsList(const std::vector<std::string>& args) {
  if (!args.empty()) return UsageError("fleetmark runs list [--limit N]", "runs list takes no arguments");
  const int limit = absl::GetFlag(FLAGS_limit);  // 1..1000: the flag parser checked its help's range
  v1::ListRunsRequest request;
  request.set_limit(static_cast<uint32_t>(limit));
  v1::ListRunsResponse response;
  if (absl::Status called = CallControl(&v1::ControlService::Stub::ListRuns, request, &response, "runs list");
      !called.ok()) {
    return called;
  }
  report::TextTable table({{"run"},
                           {"plan"},
                           {"status"},
                           {"jobs", report::Align::kRight},
                           {"results", report::Align::kRight},
                           {"created"},
                           {"selector"},
                           {"by"}});  // cli:USER, schedule:NAME, confirmation of change N
  for (const v1::RunInfo& run : response.runs()) {
    int done = 0;
    for (const v1::JobInfo& job : run.jobs()) done += job.status() == "done" ? 1 : 0;
    // An imported run (`results import`) was not run by the fleet: its status says so.
    table.AddRow(
        {run.run_id(), run.plan_name(), run.imported() ? absl::StrCat(run.status(), " (imported)") : run.status(),
         absl::StrCat(done, "/", run.jobs_size()), absl::StrCat(run.results()), FormatUnixNs(run.created_unix_ns()),
         service::SelectorText(run.selector(), run.imported()), run.submitted_by()});
  }
  std::cout << table.Render();
  return kExitOk;
}

absl::StatusOr<int> RunsShow(const std::vector<std::string>& args) {
  if (args.size() != 1) return UsageError("fleetmark runs show RUN [--wide]", "runs show takes one run id");
  absl::StatusOr<ControlClient> client = ClientFromFlags();
  if (!client.ok()) return client.status();
  v1::ExportResultsResponse exported;
  grpc::Status status = client->FetchResults(args[0], "", std::chrono::seconds(120), &exported);
  if (!status.ok()) return client->CallError(absl::StrCat("runs show ", args[0]), status);
  std::cout << RunSummary(exported.run()) << "\n"
            << RunCasesLine(exported) << "\n\n"
            << JobsTable(exported.run()) << "\n";
  absl::StatusOr<std::string> tables = ResultTables(exported, FittedTableOptions(absl::GetFlag(FLAGS_wide)));
  if (!tables.ok()) return FleetmarkError(absl::InternalError(tables.status().message()));
  std::cout << *tables << ConditionsTables(exported, absl::GetFlag(FLAGS_wide));
  return kExitOk;
}

absl::StatusOr<int> RunsCancel(const std::vector<std::string>& args) {
  if (args.size() != 1) return UsageError("fleetmark runs cancel RUN", "runs cancel takes one run id");
  v1::CancelRunRequest request;
  request.set_run_id(args[0]);
  v1::RunInfo run;
  if (absl::Status called =
          CallControl(&v1::ControlService::Stub::CancelRun, request, &run, absl::StrCat("runs cancel ", args[0]));
      !called.ok()) {
    return called;
  }
  std::cout << RunSummary(run) << "\n";
  // The agents of running jobs report what they finished once stopped (docs/cli.md).
  std::cerr << "fleetmark runs cancel: running jobs are stopped; their agents report the cases they finished and, "
               "for the cases in progress, partial results over their finished rounds: fleetmark runs show "
            << EscapeForTerminal(run.run_id(), 64) << "\n";
  return kExitOk;
}

}  // namespace

void RegisterRunRemoteCommands(CommandRegistry& registry) {
  registry.Add({.name = "submit",
                .summary = "schedule a plan on the coordinator's agents (live progress with --wait)",
                .usage = kSubmitUsage,
                .run = Submit});
  registry.Add({.name = "runs list",
                .summary = "list the newest runs",
                .usage = "fleetmark runs list [--limit N]",
                .run = RunsList});
  registry.Add({.name = "runs show",
                .summary = "show a run: its jobs and results tables per agent",
                .usage = "fleetmark runs show RUN [--wide]",
                .run = RunsShow,
                .text_arguments = {"RUN"}});
  registry.Add({.name = "runs cancel",
                .summary = "cancel a run (its running jobs are stopped)",
                .usage = "fleetmark runs cancel RUN",
                .run = RunsCancel,
                .text_arguments = {"RUN"}});
}

}  // namespace fleetmark::cli
