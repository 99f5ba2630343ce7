// `fleetmark plan validate PLAN`: parse and validate a plan without running it, and say
// what it costs (engine/plan/cost.h).
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "engine/common/text.h"
#include "coordinator/cli/local_commands.h"
#include "coordinator/cli/plan_loader.h"
#include "engine/plan/cost.h"
#include "engine/plan/plan.h"
#include "engine/topology/cpu_limits.h"

namespace fleetmark::cli {
namespace {

absl::StatusOr<int> ValidateCommand(const std::vector<std::string>& args) {
  if (args.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat("expected one PLAN argument, got ", args.size()));
  }
  absl::StatusOr<v1::Plan> plan = LoadValidPlan(args[0]);
  if (!plan.ok()) {
    // Every plan error is bad input (2), whatever its code.
    return absl::InvalidArgumentError(EscapeForTerminal(std::string(plan.status().message()), 4096));
  }
  const std::string source = args[0] == engine::kStdinPlanPath ? std::string(engine::kStdinSourceName) : args[0];
  const size_t cases = engine::ExpandCases(*plan, false).size();
  std::cout << absl::StrFormat("%s: valid plan \"%s\": %d case%s (%d with --quick)\n", EscapeForTerminal(source, 200),
                               EscapeForTerminal(plan->name()), cases, cases == 1 ? "" : "s",
                               engine::ExpandCases(*plan, true).size());
  // What it costs on each device (engine/plan/cost.h), in full and with --quick.
  for (const bool quick : {false, true}) {
    const engine::PlanCost cost = engine::EstimatePlanCost(*plan, quick, engine::EffectiveCpuCount());
    std::cout << "  " << (quick ? "with --quick: " : "duration: ") << engine::PlanCostText(cost) << "\n";
    for (const std::string& warning : {engine::RepetitionOverrunWarning(cost), engine::LongPlanWarning(cost)}) {
      if (warning.empty()) continue;
      std::cerr << "fleetmark plan validate: warning: " << (quick ? "with --quick, " : "") << warning << "\n";
    }
  }
  return kExitOk;
}

}  // namespace

void RegisterPlanCommands(CommandRegistry& registry) {
  registry.Add({.name = "plan validate",
                .summary = "check a plan (names, ranges; line:column of errors) without running it",
                .usage = "fleetmark plan validate PLAN|-",
                .run = ValidateCommand});
}

}  // namespace fleetmark::cli
