// Non-batch scenarios (memory, fanout, load): each runs one case to completion and
// fills the scenario's part of the result. The batch scenario is measured by the
// runner's repetition loop (engine/runner) instead.
//
// Isolation: the calling process never holds the scenario's tasks, servers or users.
// Every memory point, every fanout case and every load case runs in a fresh child
// process (engine/child/child.h, kinds below), so the parent's heap history does not
// leak into a memory figure and a case that exhausts threads, memory or descriptors
// kills only its child. The handlers are registered by this library's scenario.cc,
// which every binary calling RunScenarioCase links; such a binary must call
// MaybeRunChild first in main().
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "fleetmark/v1/plan.pb.h"
#include "fleetmark/v1/result.pb.h"

namespace fleetmark::engine {

// Child kinds (engine/child/child.h) registered by this library. Request and response
// are serialized protos: memory point = CaseSpec with memory.task_counts = [N] ->
// MemoryPoint (+ stack_source); fanout/load = CaseSpec -> CaseResult.
inline constexpr std::string_view kMemoryPointChildKind = "scenarios.memory_point";
inline constexpr std::string_view kFanoutChildKind = "scenarios.fanout";
inline constexpr std::string_view kLoadChildKind = "scenarios.load";

struct ScenarioContext {
  // Set by the caller to ask the case to stop early (job cancelled). May be null.
  const std::atomic<bool>* cancelled = nullptr;
  // Placement hooks, same meaning as StrategyOptions's (may be empty).
  std::function<void()> on_thread_start;
  std::function<void(int task)> on_task_start;
  // Path of an executable that accepts the hidden child-mode argument (see
  // engine/child/child.h); "" = /proc/self/exe.
  std::string child_executable;
};

// Runs `spec` (spec.scenario() is a non-batch scenario of registry.h: memory, fanout or
// load) and returns a result with status, message, scenario_result and counters filled.
// Never throws; resource exhaustion is a result status, not an error. Returns
// InvalidArgument only for a spec that names another scenario.
absl::StatusOr<v1::CaseResult> RunScenarioCase(const v1::CaseSpec& spec, const ScenarioContext& ctx);

}  // namespace fleetmark::engine
