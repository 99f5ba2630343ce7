// RunnerStrategy: the life cycle the suspending strategies (coroutine, event_loop,
// fiber) share — start one runner with `threads` carriers (default: one per logical
// CPU), report its size as threads_used, stop it. Internal to engine/strategies.
#pragma once

#include "absl/status/status.h"
#include "engine/strategies/executors/os_thread.h"
#include "engine/strategies/strategy_base.h"

namespace fleetmark::engine {

// `Runner` is an executor with `absl::Status Start(int threads, const ThreadOptions&)`,
// `int size() const` and an idempotent `void Stop()` (AsioRunner, FiberRunner). Derived
// classes implement DoRunBatch on runner(). The runner is owned here and stopped by this
// class's destructor (DoStop is final, so ~RunnerStrategy reaches it); derived classes
// must not add state that a running task touches. Thread-safety as StrategyBase.
template <typename Runner>
class RunnerStrategy : public StrategyBase {
 public:
  using StrategyBase::StrategyBase;
  ~RunnerStrategy() override { Stop(); }

 protected:
  // Starts the runner with options.threads carriers (0 = LogicalCpuCount()); errors
  // are the runner's Start errors (threads_used stays 0 then).
  absl::Status DoStart(const StrategyOptions& options) final {
    absl::Status s = runner_.Start(options.threads > 0 ? options.threads : LogicalCpuCount(), thread_options());
    if (s.ok()) set_threads_used(runner_.size());
    return s;
  }

  void DoStop() final { runner_.Stop(); }

  Runner& runner() { return runner_; }

 private:
  Runner runner_;
};

}  // namespace fleetmark::engine
