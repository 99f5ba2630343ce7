// `fleetmark recommend --profile P --measure [--select EXPR [--timeout DURATION]]
// [--tasks N] [--dry_run] [--plan_out FILE]`: builds the plan that brackets P (engine/report/recommend_plan.h),
// runs it with quick settings here (the runner, as `fleetmark run --quick`) or submits
// it to the agents EXPR matches (as `fleetmark submit --quick --wait`), and answers per
// device in one sentence plus the bracketing points (engine/report/recommend_answer.h).
#include "coordinator/cli/recommend_measure.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"
#include "coordinator/cli/device_results.h"
#include "coordinator/cli/progress_bar.h"
#include "coordinator/cli/remote_client.h"
#include "coordinator/cli/remote_commands.h"
#include "coordinator/cli/remote_flags.h"
#include "coordinator/cli/run_watch.h"
#include "engine/common/flag_parser.h"
#include "engine/common/text.h"
#include "engine/plan/plan.h"
#include "engine/report/recommend_answer.h"
#include "engine/runner/runner.h"
#include "engine/topology/host.h"
#include "google/protobuf/text_format.h"
#include "engine/common/steady_wait.h"

namespace fleetmark::cli {
namespace {

// The plan as text, headed by how to run it by hand.
std::string PlanText(const report::BracketPlan& bracket) {
  std::string text;
  google::protobuf::TextFormat::PrintToString(bracket.plan, &text);
  return absl::StrCat("# The plan `fleetmark recommend --profile '",
                      absl::StrReplaceAll(report::FormatProfile(bracket.profile), {{", ", ","}}), "' --tasks ",
                      bracket.tasks, " --measure` runs (with --quick).\n# assumed: ", report::AssumedText(bracket),
                      "\n#   fleetmark run FILE --quick --format json --out r.json\n", text);
}

// This machine's name, as `fleetmark run`'s results name the device.
std::string ThisDevice() {
  absl::StatusOr<v1::HostInfo> host = engine::DetectHost();
  if (host.ok() && !host->hostname().empty()) return host->hostname();
  char name[256] = {};
  return gethostname(name, sizeof(name) - 1) == 0 && name[0] != '\0' ? name : "this machine";
}

// Runs the plan here with quick settings; the results, or the runner's error (exit 1).
// `*deferred`: why the plan's preflight gates kept failing (RunSummary::deferred), ""
// when they passed.
absl::StatusOr<std::vector<v1::CaseResult>> MeasureHere(const v1::Plan& plan, std::string* deferred) {
  engine::RunOptions options;
  options.quick = true;
  std::optional<ProgressBar> bar;
  if (::isatty(STDERR_FILENO)) {
    bar.emplace(stderr);
    options.on_progress = [&](const engine::RunProgress& p) { bar->Update(p); };
  }
  std::vector<v1::CaseResult> results;
  absl::StatusOr<engine::RunSummary> summary = engine::RunPlan(
      plan, options, [&](const v1::CaseResult& r) { results.push_back(r); }, nullptr);
  if (bar) bar->Finish();
  if (!summary.ok()) {
    return FleetmarkError(absl::InternalError(absl::StrCat("recommend: measuring: ", summary.status().message())));
  }
  *deferred = summary->deferred;
  return results;
}

// Submits the plan to the agents --select matches and waits for it; each device's
// results, or the error.
absl::StatusOr<DeviceResults> MeasureOnFleet(const v1::Plan& plan, const std::string& usage, absl::Duration timeout) {
  absl::StatusOr<ControlClient> client = ClientFromFlags();
  if (!client.ok()) return client.status();
  absl::StatusOr<v1::RunInfo> run =
      SubmitPlan(*client, plan, {.select = absl::GetFlag(FLAGS_select), .quick = true, .filter = ""});
  if (!run.ok()) return run.status();
  WatchResult watched = WatchRunUntilEnded(*client, run->run_id(), {.timeout = timeout});
  if (!watched.ended) return watched.error;
  if (watched.run.status() != "done") {
    return FleetmarkError(
        absl::AbortedError(absl::StrCat("recommend: run ", run->run_id(), " ended ", watched.run.status())));
  }
  return LoadDeviceResults({.command = "recommend",
                            .usage = usage,
                            .args = {run->run_id()},
                            .results_file = "",
                            .plan_latest = "",
                            .agent = "",
                            .select = "",
                            .include_emulated = absl::GetFlag(FLAGS_include_emulated)});
}

}  // namespace

absl::StatusOr<int> RecommendMeasure(const report::Profile& profile, const std::string& format,
                                     const std::string& usage) {
  for (const char* other : {"run", "results", "plan_latest", "agent", "workload"}) {
    if (FlagGiven(other)) {
      return UsageError(usage, absl::StrCat("--measure measures a plan of its own: it takes no --", other));
    }
  }
  const int tasks = absl::GetFlag(FLAGS_tasks);  // 1..kMaxBracketTasks: the flag parser checked its help's range
  absl::StatusOr<report::BracketPlan> bracket =
      report::BuildBracketPlan(profile, {.tasks = static_cast<uint32_t>(tasks)});
  if (!bracket.ok()) {
    return FleetmarkError(absl::InvalidArgumentError(absl::StrCat("recommend: ", bracket.status().message())));
  }
  if (absl::Status valid = engine::ValidatePlan(bracket->plan); !valid.ok()) {
    // The builder's own mistake, not the user's.
    return FleetmarkError(
        absl::InternalError(absl::StrCat("recommend: the bracketing plan is invalid: ", valid.message())));
  }
  const std::string plan_out = absl::GetFlag(FLAGS_plan_out);
  if (!plan_out.empty()) {
    std::ofstream file(plan_out, std::ios::binary | std::ios::trunc);
    file << PlanText(*bracket);
    file.close();
    if (!file) {
      return FleetmarkError(
          absl::InvalidArgumentError(absl::StrCat("recommend: --plan_out: cannot write ", EchoValue(plan_out))));
    }
  }
  if (absl::GetFlag(FLAGS_dry_run)) {
    if (plan_out.empty()) std::cout << PlanText(*bracket);
    return kExitOk;
  }
  const bool fleet = !absl::GetFlag(FLAGS_select).empty();
  absl::StatusOr<absl::Duration> timeout = TimeoutFromFlag();
  if (!timeout.ok()) return UsageError(usage, timeout.status().message());
  if (fleet) {
    if (absl::Status select = CheckSelectFlag(/*required=*/true); !select.ok()) {
      return UsageError(usage, select.message());
    }
  } else if (FlagGiven("timeout")) {
    return UsageError(usage, "--timeout applies to --measure --select (the fleet): add --select, or drop --timeout");
  }
  const size_t cases = engine::ExpandCases(bracket->plan, /*quick=*/true).size();
  std::cerr << "recommend: measuring " << cases << " cases " << (fleet ? "on the fleet" : "here")
            << " with quick settings (" << report::AssumedText(*bracket) << ")\n";
  const absl::Time started = SteadyNow();
  std::vector<report::DeviceAnswer> answers;
  std::string header;
  if (fleet) {
    absl::StatusOr<DeviceResults> loaded = MeasureOnFleet(bracket->plan, usage, *timeout);
    if (!loaded.ok()) return loaded.status();
    header = loaded->header;
    for (const auto& [name, results] : loaded->devices)
      answers.push_back(report::AnswerBracket(*bracket, name, results));
  } else {
    std::string deferred;
    absl::StatusOr<std::vector<v1::CaseResult>> results = MeasureHere(bracket->plan, &deferred);
    if (!results.ok()) return results.status();
    if (!deferred.empty()) {
      // A verdict, not an error (as `fleetmark run`'s): the gates kept failing.
      std::cerr << "fleetmark: recommend: " << deferred << "\n";
      return kExitDeferred;
    }
    answers.push_back(report::AnswerBracket(*bracket, ThisDevice(), *results));
  }
  const double seconds = absl::ToDoubleSeconds(SteadyNow() - started);
  if (format == "json") {
    std::cout << report::BracketAnswersJson(*bracket, answers);
  } else {
    if (!header.empty()) std::cout << header << "\n\n";
    std::cout << "profile " << report::FormatProfile(profile) << absl::StrFormat(", measured in %.0f s\n", seconds)
              << report::FormatDeviceAnswers(answers, report::AssumedText(*bracket));
  }
  return kExitOk;
}

}  // namespace fleetmark::cli
