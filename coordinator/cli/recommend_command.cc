// `fleetmark recommend`: per device, the best strategy at a task profile, its paired
// ratio over the runner-up with its interval, the equivalent or undecided set, or "not
// measured near this profile" (engine/report/recommend.h), from a run, the latest run of a
// plan, or a results file; with --measure, from a plan measured for the profile
// (recommend_measure.h); with --workload, one sentence for a fixed workload of a run
// (engine/report/recommend_answer.h).
#include <algorithm>
#include <iostream>
#include <optional>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "coordinator/cli/command.h"
#include "coordinator/cli/device_results.h"
#include "coordinator/cli/remote_client.h"
#include "coordinator/cli/remote_commands.h"
#include "coordinator/cli/recommend_measure.h"
#include "coordinator/cli/remote_flags.h"
#include "coordinator/cli/run_flags.h"
#include "engine/common/registry.h"
#include "engine/common/suggest.h"
#include "engine/common/text.h"
#include "engine/common/flag_parser.h"
#include "engine/report/recommend.h"
#include "engine/report/recommend_answer.h"
#include "engine/report/recommend_plan.h"

namespace fleetmark::cli {
namespace {

constexpr char kRecommendUsage[] =
    "fleetmark recommend --profile 'cpu_us=50,wait_us=2000' --measure [--tasks N] [--select EXPR [--timeout DURATION]] "
    "[--dry_run] [--plan_out FILE] [--format table|json] | "
    "fleetmark recommend (--profile P | --workload NAME) (--run RUN | --plan_latest NAME | --results FILE[,FILE...]) "
    "[--select EXPR] [--agent NAME] [--include_emulated] [--format table|json]";

// The flags that only --measure reads.
constexpr const char* kMeasureOnly[] = {"tasks", "dry_run", "plan_out", "timeout"};

// `recommend --workload NAME`: each device's one-sentence answer for that workload.
int RecommendWorkload(const DeviceResults& loaded, const std::string& workload, const std::string& format) {
  std::vector<report::DeviceAnswer> answers;
  for (const auto& [name, results] : loaded.devices) answers.push_back(report::AnswerWorkload(workload, name, results));
  if (format == "json") {
    nlohmann::json devices = nlohmann::json::array();
    for (const report::DeviceAnswer& a : answers) devices.push_back(report::DeviceAnswerJson(a));
    std::cout << nlohmann::json{{"workload", workload}, {"devices", std::move(devices)}}.dump(2) << "\n";
  } else {
    if (!loaded.header.empty()) std::cout << loaded.header << "\n\n";
    std::cout << "workload " << EscapeForTerminal(workload) << "\n" << report::FormatDeviceAnswers(answers, "");
  }
  return kExitOk;
}

absl::StatusOr<int> Recommend(const std::vector<std::string>& args) {
  if (!args.empty()) {
    return UsageError(kRecommendUsage, "recommend takes no positional arguments (a run is --run RUN)");
  }
  const std::string format = absl::GetFlag(FLAGS_format);
  if (format != "table" && format != "json") {
    return FleetmarkError(absl::InvalidArgumentError(
        absl::StrCat("recommend: --format: table or json, got \"", EchoValue(format), "\"")));
  }
  const std::string workload = absl::GetFlag(FLAGS_workload);
  const bool measure = absl::GetFlag(FLAGS_measure);
  if (!measure) {
    for (const char* flag : kMeasureOnly) {
      if (FlagGiven(flag)) return UsageError(kRecommendUsage, absl::StrCat("--", flag, " applies to --measure"));
    }
  }
  if (!workload.empty()) {
    std::vector<std::string> workloads;
    for (const engine::NameInfo& w : engine::kWorkloads) workloads.emplace_back(w.name);
    if (std::find(workloads.begin(), workloads.end(), workload) == workloads.end()) {
      return FleetmarkError(
          absl::InvalidArgumentError(absl::StrCat("recommend: --workload: ", OneOfMessage(workload, workloads))));
    }
  }
  const bool profile_given = FlagGiven("profile");  // --profile '' is given (and empty: ParseProfile says so)
  if (profile_given && FlagGiven("workload")) {
    return UsageError(kRecommendUsage, "give --profile or --workload, not both");
  }
  if (!profile_given && workload.empty()) {
    return UsageError(kRecommendUsage, "recommend needs --profile, or --workload NAME to answer from a run");
  }
  std::optional<report::Profile> profile;
  if (workload.empty()) {
    // --measure brackets less than a plan allows: its range is the one quoted.
    const report::ProfileLimits measured = report::MeasureProfileLimits();
    absl::StatusOr<report::Profile> parsed =
        report::ParseProfile(absl::GetFlag(FLAGS_profile), measure ? &measured : nullptr);
    if (!parsed.ok()) {
      return FleetmarkError(absl::InvalidArgumentError(absl::StrCat(
          "recommend: --profile: ",
          EscapeForTerminal(CutEchoes(std::string(parsed.status().message()), absl::GetFlag(FLAGS_profile))))));
    }
    profile = *parsed;
  }
  if (measure) {
    if (!profile) return UsageError(kRecommendUsage, "--measure needs --profile (not --workload)");
    return RecommendMeasure(*profile, format, kRecommendUsage);
  }
  const std::string run = absl::GetFlag(FLAGS_run);
  absl::StatusOr<DeviceResults> loaded =
      LoadDeviceResults({.command = "recommend",
                         .usage = kRecommendUsage,
                         .args = run.empty() ? std::vector<std::string>{} : std::vector<std::string>{run},
                         .results_file = absl::GetFlag(FLAGS_results),
                         .plan_latest = absl::GetFlag(FLAGS_plan_latest),
                         .agent = absl::GetFlag(FLAGS_agent),
                         .select = absl::GetFlag(FLAGS_select),
                         .include_emulated = absl::GetFlag(FLAGS_include_emulated)});
  if (!loaded.ok()) return loaded.status();
  for (const std::string& note : loaded->one_host) std::cerr << "fleetmark: recommend: note: " << note << "\n";
  if (!workload.empty()) return RecommendWorkload(*loaded, workload, format);
  std::vector<report::DeviceRecommendations> devices;
  for (const auto& [name, results] : loaded->devices) {
    devices.push_back({name, report::Recommend(report::BuildStrategyMap(results), *profile)});
  }
  if (format == "json") {
    std::cout << report::RecommendationsJson(*profile, devices);
  } else {
    if (!loaded->header.empty()) std::cout << loaded->header << "\n\n";
    std::cout << report::FormatRecommendations(*profile, devices);
  }
  return kExitOk;
}

}  // namespace

void RegisterRecommendCommand(CommandRegistry& registry) {
  registry.Add({.name = "recommend",
                .summary = "per device, the best strategy at a task profile with its paired ratio and interval, "
                           "or the equivalent / undecided set; \"not measured near this profile\" outside the "
                           "measured sweeps; --measure measures the profile's neighbourhood first and answers in "
                           "one sentence; --format json",
                .usage = kRecommendUsage,
                .runs_cases = true,
                .run = Recommend});
}

}  // namespace fleetmark::cli
