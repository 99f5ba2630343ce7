// `fleetmark map`: the strategy map (engine/report/strategy_map.h) of each agent of a
// run, or of a results file written by `fleetmark run --format json`; as a table, or
// with --format json as {"devices": [{"device", "map": StrategyMapJson}]}.
#include <iostream>
#include <optional>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "coordinator/cli/command.h"
#include "coordinator/cli/device_results.h"
#include "coordinator/cli/remote_commands.h"
#include "coordinator/cli/remote_flags.h"
#include "coordinator/cli/run_flags.h"
#include "engine/common/text.h"
#include "engine/report/strategy_map.h"
#include "engine/report/strategy_map_json.h"

namespace fleetmark::cli {
namespace {

constexpr char kMapUsage[] =
    "fleetmark map RUN [--agent NAME] [--include_emulated] [--format table|json] | fleetmark map --results "
    "FILE[,FILE...] "
    "[--format table|json]";
// The map of one device's results, under its name.
std::string DeviceMap(const std::string& device, const std::vector<v1::CaseResult>& results) {
  const report::StrategyMap map = report::BuildStrategyMap(results);
  std::string text = report::FormatStrategyMap(map);
  if (text.empty()) text = "no batch case measured ok: nothing to map\n\n";
  return absl::StrCat("device ", EscapeForTerminal(device), "\n", text);
}

absl::StatusOr<int> Map(const std::vector<std::string>& args) {
  const std::string format = absl::GetFlag(FLAGS_format);
  if (format != "table" && format != "json") {
    return FleetmarkError(
        absl::InvalidArgumentError(absl::StrCat("map: --format: table or json, got \"", EchoValue(format), "\"")));
  }
  absl::StatusOr<DeviceResults> loaded = LoadDeviceResults({.command = "map",
                                                            .usage = kMapUsage,
                                                            .args = args,
                                                            .results_file = absl::GetFlag(FLAGS_results),
                                                            .plan_latest = "",
                                                            .agent = absl::GetFlag(FLAGS_agent),
                                                            .select = "",
                                                            .include_emulated = absl::GetFlag(FLAGS_include_emulated)});
  if (!loaded.ok()) return loaded.status();
  for (const std::string& note : loaded->one_host) std::cerr << "fleetmark: map: note: " << note << "\n";
  if (format == "json") {
    nlohmann::json doc = {{"devices", nlohmann::json::array()}};
    for (const auto& [name, results] : loaded->devices) {
      doc["devices"].push_back({{"device", name}, {"map", report::StrategyMapJson(report::BuildStrategyMap(results))}});
    }
    std::cout << doc.dump(2) << "\n";
    return kExitOk;
  }
  if (!loaded->header.empty()) std::cout << loaded->header << "\n\n";
  for (const auto& [name, results] : loaded->devices) std::cout << DeviceMap(name, results);
  return kExitOk;
}

}  // namespace

void RegisterMapCommand(CommandRegistry& registry) {
  registry.Add({.name = "map",
                .summary = "the strategy map per device: per point the verdict (decided winner with its paired ratio "
                           "and interval, equivalent, undecided or provisional) and the crossovers; --format json",
                .usage = kMapUsage,
                .run = Map,
                .text_arguments = {"RUN"}});
}

}  // namespace fleetmark::cli
