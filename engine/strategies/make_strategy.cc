#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/strategies/adapters.h"
#include "engine/strategies/registry.h"
#include "engine/strategies/strategy.h"

namespace fleetmark::engine {
namespace {

// The constructor of each registry entry, in registry order (checked below).
struct Factory {
  std::string_view name;
  std::unique_ptr<Strategy> (*make)();
};
constexpr Factory kFactories[] = {
    {"direct", &NewDirectStrategy},
    {"single_thread", &NewSingleThreadStrategy},
    {"fixed_pool", &NewFixedPoolStrategy},
    {"work_stealing", &NewWorkStealingStrategy},
    {"limited", &NewLimitedStrategy},
    {"elastic_pool", &NewElasticPoolStrategy},
    {"thread_per_task", &NewThreadPerTaskStrategy},
    {"async", &NewAsyncStrategy},
    {"coroutine", &NewCoroutineStrategy},
    {"fiber", &NewFiberStrategy},
    {"event_loop", &NewEventLoopStrategy},
    {"openmp_for", &NewOpenMpForStrategy},
    {"openmp_for_dynamic", &NewOpenMpForDynamicStrategy},
    {"openmp_for_guided", &NewOpenMpForGuidedStrategy},
    {"openmp_task", &NewOpenMpTaskStrategy},
    {"std_par", &NewStdParStrategy},
};

constexpr bool FactoriesFollowTheRegistry() {
  if (std::size(kFactories) != kStrategies.size()) return false;
  for (size_t i = 0; i < kStrategies.size(); ++i) {
    if (kFactories[i].name != kStrategies[i].name) return false;
  }
  return true;
}
static_assert(FactoriesFollowTheRegistry(), "kFactories must name every kStrategies entry, in registry order");

}  // namespace

std::unique_ptr<Strategy> MakeStrategy(const StrategyTraits& traits) {
  return kFactories[&traits - kStrategies.data()].make();
}

absl::StatusOr<std::unique_ptr<Strategy>> MakeStrategy(std::string_view name) {
  const StrategyTraits* traits = FindStrategy(name);
  if (traits == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("strategy: unknown name \"", std::string(name), "\"; allowed: ",
                                                   StrategyNames([](const StrategyTraits&) { return true; }, ", ")));
  }
  return MakeStrategy(*traits);
}

}  // namespace fleetmark::engine
