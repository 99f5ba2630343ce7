// StrategyBase: what the strategy adapters share — option and argument checks,
// the Start/RunBatch/Stop life cycle, the task hooks, peak-in-flight tracking and the
// body of a task with a blocking wait. Internal to engine/strategies.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "engine/strategies/executors/executor.h"
#include "engine/strategies/strategy.h"

namespace fleetmark::engine {

class StrategyBase : public Strategy {
 public:
  // `unsupported_reason` is empty for strategies with a suspending wait, else why they
  // have none (returned with Unimplemented for io_mode suspending).
  StrategyBase(std::string_view name, std::string_view thread_name_prefix, std::string_view unsupported_reason);

  std::string_view name() const final { return name_; }
  bool SupportsSuspending() const final { return unsupported_reason_.empty(); }
  int threads_used() const final { return threads_used_.load(); }
  int peak_in_flight() const final { return peak_in_flight_.load(); }

  // Validate (threads, stack_kib, limit; once only), then DoStart.
  absl::Status Start(const StrategyOptions& options) final;
  // Validate (started, 0 <= n <= kMaxBatchTasks, io mode), then DoRunBatch; a task that
  // failed (e.g. out of memory) turns into the batch's error.
  absl::Status RunBatch(const Workload& workload, int n, IoMode mode) final;
  // Calls DoStop once. Derived destructors must call Stop() (virtual calls do not
  // reach them from ~StrategyBase).
  void Stop() final;

 protected:
  // `threads` is options.threads (0 = default), already range-checked.
  virtual absl::Status DoStart(const StrategyOptions& options) = 0;
  virtual absl::Status DoRunBatch(const Workload& workload, int n, IoMode mode) = 0;
  virtual void DoStop() = 0;

  const StrategyOptions& options() const { return options_; }
  ThreadOptions thread_options() const;
  void set_threads_used(int threads) { threads_used_.store(threads); }
  void raise_threads_used(int threads);

  // Task `i` pieces, in order: BeginTask (on_task_start, in-flight + 1), ComputeTask
  // (Compute; failures recorded, never thrown), the wait, EndTask (in-flight - 1,
  // on_task_end). Thread-safe, except for a strategy whose registry entry runs one task
  // at a time on one thread (Concurrency::kOne: direct, single_thread): its per-task
  // counters are plain fields (no atomic read-modify-write per task), written only by
  // the one thread running its tasks and published when RunBatch returns.
  void BeginTask(int i);
  void ComputeTask(const Workload& workload, int i);
  void EndTask(int i);
  // Runs a task hook; an exception it throws becomes the batch's Internal error.
  void CallHook(const std::function<void(int)>& hook, int i, std::string_view which);
  // All of task `i` with a blocking wait (sleep on the current thread).
  void RunBlockingTask(const Workload& workload, int i);
  // Records the first failure of a task in this batch (returned by RunBatch).
  void RecordTaskFailure(absl::Status status);

  // Submits tasks 0..n-1 (RunBlockingTask each) to `executor` and waits for all. On a
  // Submit error, waits for the tasks already submitted and returns the error.
  absl::Status RunBlockingOnExecutor(Executor& executor, const Workload& workload, int n);

 private:
  const std::string name_;
  const std::string thread_name_prefix_;
  const std::string unsupported_reason_;
  StrategyOptions options_;
  bool started_ = false;
  bool stopped_ = false;
  std::atomic<int> threads_used_{0};
  std::atomic<int> in_flight_{0};
  std::atomic<int> peak_in_flight_{0};
  std::atomic<uint64_t> sink_{0};
  // Concurrency::kOne (one thread runs every task): plain per-task counters instead of
  // in_flight_ / peak_in_flight_ / sink_, published by RunBatch.
  const bool one_runner_;
  int one_peak_ = 0;
  uint64_t one_sink_ = 0;
  std::mutex failure_mu_;
  absl::Status first_failure_;  // guarded by failure_mu_
};

// Sleeps the calling OS thread for `wait` (no-op for zero or negative).
void BlockingWait(absl::Duration wait);

}  // namespace fleetmark::engine
