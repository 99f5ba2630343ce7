// Non-batch scenarios (memory, fanout, load): each runs one case to completion and
// fills the scenario's part of the result. The batch scenario is measured by the
// runner's repetition loop (engine/runner) instead.
#pragma once

#include <atomic>
#include <functional>

#include "absl/status/statusor.h"
#include "fleetmark/v1/plan.pb.h"
#include "fleetmark/v1/result.pb.h"

namespace fleetmark::engine {

struct ScenarioContext {
  // Set by the caller to ask the case to stop early (job cancelled). May be null.
  const std::atomic<bool>* cancelled = nullptr;
  // Placement hooks, same meaning as StrategyOptions's (may be empty).
  std::function<void()> on_thread_start;
  std::function<void(int task)> on_task_start;
  // Path of an executable that accepts the hidden child-mode argument (see
  // engine/runner/child.h); "" = /proc/self/exe.
  std::string child_executable;
};

// Runs `spec` (spec.scenario() is "memory", "fanout" or "load") and returns a result
// with status, message, scenario_result and counters filled. Never throws; resource
// exhaustion is a result status, not an error. Returns InvalidArgument only for a
// spec that names another scenario.
absl::StatusOr<v1::CaseResult> RunScenarioCase(const v1::CaseSpec& spec,
                                               const ScenarioContext& ctx);

}  // namespace fleetmark::engine
