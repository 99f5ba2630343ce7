// MaxConcurrentTasks, MinWaitTime, MinRepetitionTime (repetition_time.h).
#include "engine/plan/repetition_time.h"

#include <algorithm>
#include <memory>

#include "engine/common/synthetic_text.h"
#include "engine/scenarios/registry.h"
#include "engine/strategies/registry.h"
#include "engine/workloads/workload.h"

namespace fleetmark::engine {

uint64_t MaxConcurrentTasks(const v1::StrategySpec& strategy, std::string_view io_mode, uint32_t tasks) {
  const StrategyTraits* traits = FindStrategy(strategy.name());
  if (traits == nullptr) return tasks;  // reported by plan validation
  if (traits->concurrency == Concurrency::kOne) return 1;
  if (traits->concurrency == Concurrency::kPerTask || strategy.threads() == 0) return tasks;
  const bool suspends = io_mode == "suspending" && traits->suspending;
  return suspends ? tasks : std::min<uint64_t>(strategy.threads(), tasks);
}

namespace {

struct Waits {
  absl::Duration total;
  absl::Duration longest;
};

Waits WaitsOf(const Workload& workload, uint32_t tasks) {
  Waits waits{absl::ZeroDuration(), absl::ZeroDuration()};
  for (uint32_t i = 0; i < tasks; ++i) {
    const absl::Duration wait = workload.Wait(static_cast<int>(i));
    waits.total += wait;
    waits.longest = std::max(waits.longest, wait);
  }
  return waits;
}

}  // namespace

absl::Duration MinWaitTime(const Workload& workload, uint32_t tasks, uint64_t concurrency) {
  const Waits waits = WaitsOf(workload, tasks);
  return std::max(waits.longest, waits.total / static_cast<int64_t>(std::max<uint64_t>(concurrency, 1)));
}

absl::Duration MinRepetitionTime(const v1::CaseSpec& spec, int cpus) {
  if (!IsBatch(spec)) return absl::ZeroDuration();
  const uint32_t tasks = spec.batch().tasks();
  const bool synthetic = spec.workload() == kSyntheticWorkload;
  // Waits only: a workload with cpu_ns would calibrate its loop (validation never runs it).
  v1::SyntheticParams waits_only = synthetic ? spec.synthetic() : v1::SyntheticParams();
  waits_only.set_cpu_ns(0);
  absl::StatusOr<std::unique_ptr<Workload>> workload = MakeWorkload(spec.workload(), waits_only);
  if (!workload.ok()) return absl::ZeroDuration();
  const Waits waits = WaitsOf(**workload, tasks);
  const absl::Duration task_cpu = absl::Nanoseconds(synthetic ? spec.synthetic().cpu_ns() : 0);
  const absl::Duration cpu = task_cpu * tasks;
  const std::string_view io_mode = spec.io_mode().empty() ? std::string_view("blocking") : spec.io_mode();
  // The threads a task's CPU part and blocking wait hold (every task for a strategy
  // that does not block a thread while it waits), and the CPUs its CPU work spreads over.
  const int64_t waiting =
      static_cast<int64_t>(std::max<uint64_t>(MaxConcurrentTasks(spec.strategy(), io_mode, tasks), 1));
  const StrategyTraits* traits = FindStrategy(spec.strategy().name());
  int64_t computing = std::max(cpus, 1);
  if (traits != nullptr && traits->concurrency == Concurrency::kOne) computing = 1;
  if (traits != nullptr && traits->concurrency == Concurrency::kThreads && spec.strategy().threads() > 0) {
    computing = std::min<int64_t>(computing, spec.strategy().threads());
  }
  return std::max({(cpu + waits.total) / waiting, cpu / computing, waits.longest + task_cpu});
}

}  // namespace fleetmark::engine
