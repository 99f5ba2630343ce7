// `fleetmark recommend`: per device, the best strategy at a task profile, its margin
// over the runner-up with a CI, the ties, or "not measured near this profile"
// (engine/report/recommend.h), from a run, the latest run of a plan, or a results file.
#include <iostream>
#include <optional>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "coordinator/cli/command.h"
#include "coordinator/cli/device_results.h"
#include "coordinator/cli/remote_client.h"
#include "coordinator/cli/remote_commands.h"
#include "coordinator/cli/remote_flags.h"
#include "coordinator/cli/run_flags.h"
#include "engine/common/text.h"
#include "engine/report/recommend.h"

namespace fleetmark::cli {
namespace {

constexpr char kRecommendUsage[] =
    "fleetmark recommend --profile 'cpu_us=50,wait_us=2000' (--run RUN | --plan_latest NAME | --results FILE) "
    "[--select EXPR] [--agent NAME] [--include_emulated] [--format table|json]";

int Recommend(const std::vector<std::string>& args) {
  if (!args.empty())
    return RemoteUsageError(kRecommendUsage, "recommend takes no positional arguments (a run is --run RUN)");
  const std::string format = absl::GetFlag(FLAGS_format);
  if (format != "table" && format != "json") {
    std::cerr << "fleetmark: recommend: --format: table or json, got \"" << EchoValue(format) << "\"\n";
    return kExitUsage;
  }
  if (absl::GetFlag(FLAGS_profile).empty()) return RemoteUsageError(kRecommendUsage, "recommend needs --profile");
  absl::StatusOr<report::Profile> profile = report::ParseProfile(absl::GetFlag(FLAGS_profile));
  if (!profile.ok()) {
    std::cerr << "fleetmark: recommend: --profile: " << EscapeForTerminal(CutEchoes(std::string(profile.status().message()), absl::GetFlag(FLAGS_profile)))
              << "\n";
    return kExitUsage;
  }
  const std::string run = absl::GetFlag(FLAGS_run);
  int code = kExitOk;
  std::optional<DeviceResults> loaded =
      LoadDeviceResults({.command = "recommend",
                         .usage = kRecommendUsage,
                         .args = run.empty() ? std::vector<std::string>{} : std::vector<std::string>{run},
                         .results_file = absl::GetFlag(FLAGS_results),
                         .plan_latest = absl::GetFlag(FLAGS_plan_latest),
                         .agent = absl::GetFlag(FLAGS_agent),
                         .select = absl::GetFlag(FLAGS_select),
                         .include_emulated = absl::GetFlag(FLAGS_include_emulated)},
                        &code);
  if (!loaded) return code;
  if (loaded->devices.empty()) {
    std::cerr << "fleetmark: recommend: no device left to answer for (--select matched none of the run's agents)\n";
    return kExitUsage;
  }
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
                .summary = "per device, the best strategy at a task profile, its margin with a CI, or the ties; "
                           "\"not measured near this profile\" outside the measured sweeps",
                .usage = kRecommendUsage,
                .run = Recommend});
}

}  // namespace fleetmark::cli
