#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/plan/registry.h"
#include "engine/strategies/adapters.h"
#include "engine/strategies/strategy.h"

namespace fleetmark::engine {

absl::StatusOr<std::unique_ptr<Strategy>> MakeStrategy(std::string_view name) {
  using Factory = std::unique_ptr<Strategy> (*)();
  static constexpr std::pair<std::string_view, Factory> kFactories[] = {
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
  };
  static_assert(std::size(kFactories) == kStrategies.size(),
                "every registry strategy needs a factory");
  for (const auto& [factory_name, factory] : kFactories) {
    if (factory_name == name) return factory();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "strategy: unknown name \"", std::string(name), "\"; allowed: ",
      absl::StrJoin(kStrategies, ", ", [](std::string* out, const StrategyNameInfo& s) {
        out->append(s.name);
      })));
}

}  // namespace fleetmark::engine
