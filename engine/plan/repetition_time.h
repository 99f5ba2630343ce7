// The shortest time one repetition of a batch case can take, from what its plan states
// (its tasks, its strategy's concurrency, the synthetic workload's cpu_ns and waits):
// one rule for plan validation's bound on one repetition (validate.cc) and the cost
// estimate (cost.h). A lower bound, never a prediction: the named workloads' CPU work
// is not known before they run (it would need calibration), so only synthetic cpu_ns
// counts as CPU work; waits are the workload's own formulas (engine/workloads).
//
// Thread-safe (pure functions).
#pragma once

#include <cstdint>
#include <string_view>

#include "absl/time/time.h"
#include "fleetmark/v1/plan.pb.h"
#include "fleetmark/v1/result.pb.h"

namespace fleetmark::engine {

class Workload;

// An upper bound on how many of a batch's tasks wait at once under `strategy` (its
// threads, or all `tasks` when the strategy or a default we cannot know here allows it).
uint64_t MaxConcurrentTasks(const v1::StrategySpec& strategy, std::string_view io_mode, uint32_t tasks);

// Shortest duration of `tasks` tasks' waits of `workload` with at most `concurrency`
// tasks waiting at once: max(longest wait, total wait / concurrency).
absl::Duration MinWaitTime(const Workload& workload, uint32_t tasks, uint64_t concurrency);

// The shortest duration one repetition of the expanded batch case `spec` can take on a
// device that lets a process use `cpus` CPUs (>= 1), the largest of
//   (CPU work + waits) / MaxConcurrentTasks  a task holds its thread for its CPU part
//                                            and a blocking wait, so 1-thread strategies
//                                            (direct, single_thread, threads: 1)
//                                            serialize both;
//   CPU work / min(cpus, the strategy's threads; 1 for direct and single_thread);
//   the longest wait + one task's CPU part;
// with CPU work = tasks x cpu_ns (synthetic only) and waits the workload's. Zero for a
// case that is not batch or whose workload is unknown.
absl::Duration MinRepetitionTime(const v1::CaseSpec& spec, int cpus);

}  // namespace fleetmark::engine
