// `fleetmark list`: the strategies, workloads, scenarios, io modes and placements a
// plan may name.
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "coordinator/cli/local_commands.h"
#include "engine/common/registry.h"
#include "engine/scenarios/registry.h"
#include "engine/strategies/registry.h"

namespace fleetmark::cli {
namespace {

template <typename Table>
void PrintSection(const char* title, const Table& table) {
  std::cout << title << ":\n";
  for (const auto& entry : table) {
    std::cout << absl::StrFormat("  %-18s %s\n", std::string(entry.name), std::string(entry.description));
  }
  std::cout << "\n";
}

absl::StatusOr<int> ListCommand(const std::vector<std::string>& args) {
  if (!args.empty()) return absl::InvalidArgumentError(absl::StrCat("takes no arguments, got \"", args[0], "\""));
  std::cout << "strategies:\n";
  for (const engine::StrategyTraits& s : engine::kStrategies) {
    std::cout << absl::StrFormat("  %-18s %s%s\n", std::string(s.name), std::string(s.description),
                                 s.suspending ? " [suspending waits]" : "");
  }
  std::cout << "\n";
  PrintSection("workloads", engine::kWorkloads);
  PrintSection("scenarios", engine::kScenarios);
  std::cout << "io modes:\n"
               "  blocking           waits park the carrier OS thread\n"
            << "  suspending         waits use the strategy's own timer ("
            << engine::StrategyNames([](const engine::StrategyTraits& s) { return s.suspending; }, ", ")
            << " only)\n\n"
               "placements:\n"
               "  any                no pinning\n"
               "  class:<name>       the CPUs of one core class (performance, mid, efficiency)\n"
               "  one_per_core       one hardware thread of every physical core\n"
               "  smt_pairs          both SMT siblings of as few cores as possible\n"
               "  cpus:<list>        an explicit CPU list such as 0,2-3\n";
  return kExitOk;
}

}  // namespace

void RegisterListCommand(CommandRegistry& registry) {
  registry.Add({.name = "list",
                .summary = "list strategies, workloads, scenarios, io modes and placements",
                .usage = "fleetmark list",
                .run = ListCommand});
}

}  // namespace fleetmark::cli
