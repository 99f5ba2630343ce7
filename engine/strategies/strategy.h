// Strategies: the concurrency mechanisms fleetmark measures (docs/architecture.md's table, "Strategies").
//
// A Strategy is built (Start: threads/pools created — setup, untimed unless the plan
// says include_setup), then runs batches of tasks (RunBatch: timed), then is stopped
// (Stop: every thread it created is joined). Between batches its threads are idle
// (blocked, never spinning).
//
//   FLEETMARK_ASSIGN_OR_RETURN(auto s, MakeStrategy("fixed_pool"));
//   FLEETMARK_RETURN_IF_ERROR(s->Start({.threads = 4}));
//   FLEETMARK_RETURN_IF_ERROR(s->RunBatch(*workload, 100, IoMode::kBlocking));
//   s->Stop();
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/strategies/limits.h"
#include "engine/strategies/registry.h"
#include "engine/workloads/workload.h"

namespace fleetmark::engine {

enum class IoMode { kBlocking, kSuspending };

// Parses "blocking" / "suspending"; InvalidArgument otherwise.
absl::StatusOr<IoMode> ParseIoMode(std::string_view text);
std::string_view IoModeName(IoMode mode);

// The ranges every strategy enforces (threads and limit <= kMaxThreads, RunBatch's
// n <= kMaxBatchTasks, stack_kib) are engine/strategies/limits.h's; the plan validator
// enforces the same caps before anything runs.

// What `threads` means per strategy (0 = the default in brackets):
//   direct            ignored; tasks run on the caller (threads_used = 0)
//   single_thread     ignored; one worker
//   fixed_pool        workers sharing one FIFO queue [logical CPUs]
//   work_stealing     oneTBB arena workers, no slot reserved for the caller [CPUs]
//   limited           cap on tasks in flight [max(1, CPUs/2)]; the shared pool under
//                     it has `limit` threads [max(CPUs, threads)]
//   elastic_pool      cap on threads, created on demand and then reused [64]
//   thread_per_task   ignored; one new thread per task (threads_used = n)
//   async             ignored; one std::async thread per task (threads_used = n)
//   coroutine, event_loop  io_contexts, one thread each [CPUs]
//   fiber             fibre carrier threads [CPUs]; stack_kib sizes the fibres
//   openmp_for, openmp_for_dynamic, openmp_for_guided, openmp_task
//                     OpenMP team threads, the strategy's master thread included [CPUs];
//                     threads_used = the team OpenMP gave (omp_get_num_threads); `limit`
//                     = the openmp_for* chunk size [OpenMP's default]; stack_kib unsupported
//   std_par           oneTBB arena workers std::for_each(par) runs on, as work_stealing [CPUs]
// "Logical CPUs" = min(the CPUs this process may run on (sched_getaffinity), its cgroup
// CPU quota rounded up): LogicalCpuCount(), engine/topology/cpu_limits.h.
struct StrategyOptions {
  int threads = 0;    // worker threads; 0 = the strategy's default
  int stack_kib = 0;  // stack of threads/fibres it creates; 0 = system default
  int limit = 0;      // `limited`: pool size (threads = cap); openmp_for*: chunk; servers: queue capacity
  // Called first on every OS thread the strategy creates, before it runs any task
  // (placement uses it to pin the thread). May be empty. Must be thread-safe.
  std::function<void()> on_thread_start = {};
  // Called inside every task `i`, on the thread running it, before Compute (placement
  // verification samples sched_getcpu here). May be empty. Must be thread-safe.
  std::function<void(int task)> on_task_start = {};
  // Called when task `i` has finished (after its wait), on the thread that finished
  // it. May be empty. Must be thread-safe.
  std::function<void(int task)> on_task_end = {};
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual std::string_view name() const = 0;

  // Creates the strategy's threads/schedulers. Returns ResourceExhausted if threads
  // cannot be created, InvalidArgument for bad options. Call once.
  virtual absl::Status Start(const StrategyOptions& options) = 0;

  // Runs tasks 0..n-1 of `workload` (each: Compute(i), then Wait(i) per `mode`) and
  // returns when all have finished. Returns Unimplemented (reported as the case status
  // `unsupported`, with the reason) when `mode` is suspending and the strategy has no
  // suspending wait; ResourceExhausted when it runs out of threads. One caller at a
  // time; the caller's thread is not one of the strategy's workers.
  virtual absl::Status RunBatch(const Workload& workload, int n, IoMode mode) = 0;

  // Joins every thread the strategy created. Idempotent; also called by the destructor.
  virtual void Stop() = 0;

  virtual bool SupportsSuspending() const = 0;
  // Threads the strategy really used (created, or 0 for direct = caller only).
  virtual int threads_used() const = 0;
  // Peak number of tasks running at once (between on_task_start and task end) since
  // Start. Thread-safe.
  virtual int peak_in_flight() const = 0;
};

// Returns a new, unstarted strategy `name` (one of engine/strategies/registry.h's
// kStrategies) or InvalidArgument naming the allowed set. Thread-safe.
absl::StatusOr<std::unique_ptr<Strategy>> MakeStrategy(std::string_view name);
// The same for a registry entry (`traits` must point into kStrategies). Thread-safe.
std::unique_ptr<Strategy> MakeStrategy(const StrategyTraits& traits);

}  // namespace fleetmark::engine
