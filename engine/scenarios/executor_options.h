// ThreadOptions for the executors the scenarios start (engine/strategies/executors):
// the plan's stack size and a thread-name prefix, no hooks.
#pragma once

#include <cstdint>
#include <string>

#include "engine/strategies/executors/executor.h"

namespace fleetmark::engine {

inline ThreadOptions ScenarioThreadOptions(uint32_t stack_kib, std::string name_prefix = "fm-worker") {
  ThreadOptions options;
  options.stack_kib = static_cast<int>(stack_kib);
  options.name_prefix = std::move(name_prefix);
  return options;
}

}  // namespace fleetmark::engine
