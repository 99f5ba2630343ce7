// Constructors of the 16 strategy adapters (one .cc each), used by MakeStrategy.
// Internal to engine/strategies: everyone else calls MakeStrategy(name).
#pragma once

#include <memory>

#include "engine/strategies/strategy.h"

namespace fleetmark::engine {

std::unique_ptr<Strategy> NewDirectStrategy();
std::unique_ptr<Strategy> NewSingleThreadStrategy();
std::unique_ptr<Strategy> NewFixedPoolStrategy();
std::unique_ptr<Strategy> NewWorkStealingStrategy();
std::unique_ptr<Strategy> NewLimitedStrategy();
std::unique_ptr<Strategy> NewElasticPoolStrategy();
std::unique_ptr<Strategy> NewThreadPerTaskStrategy();
std::unique_ptr<Strategy> NewAsyncStrategy();
std::unique_ptr<Strategy> NewCoroutineStrategy();
std::unique_ptr<Strategy> NewFiberStrategy();
std::unique_ptr<Strategy> NewEventLoopStrategy();
std::unique_ptr<Strategy> NewOpenMpForStrategy();
std::unique_ptr<Strategy> NewOpenMpForDynamicStrategy();
std::unique_ptr<Strategy> NewOpenMpForGuidedStrategy();
std::unique_ptr<Strategy> NewOpenMpTaskStrategy();
std::unique_ptr<Strategy> NewStdParStrategy();

}  // namespace fleetmark::engine
