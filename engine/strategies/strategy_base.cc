#include "engine/strategies/strategy_base.h"

#include <latch>
#include <new>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "engine/strategies/executors/os_thread.h"

namespace fleetmark::engine {

void BlockingWait(absl::Duration wait) {
  if (wait > absl::ZeroDuration()) std::this_thread::sleep_for(absl::ToChronoNanoseconds(wait));
}

StrategyBase::StrategyBase(std::string_view name, std::string_view thread_name_prefix,
                           std::string_view unsupported_reason)
    : name_(name),
      thread_name_prefix_(thread_name_prefix),
      unsupported_reason_(unsupported_reason),
      one_runner_(FindStrategy(name) != nullptr && FindStrategy(name)->concurrency == Concurrency::kOne) {}

absl::Status StrategyBase::Start(const StrategyOptions& options) {
  if (started_) {
    return absl::FailedPreconditionError(absl::StrCat(name_, ": Start was already called (a strategy starts once)"));
  }
  if (options.threads < 0 || options.threads > kMaxThreads) {
    return absl::InvalidArgumentError(
        absl::StrCat(name_, ": threads: 0 (default) <= threads <= ", kMaxThreads, ", got ", options.threads));
  }
  if (options.limit < 0 || options.limit > kMaxThreads) {
    return absl::InvalidArgumentError(
        absl::StrCat(name_, ": limit: 0 (default) <= limit <= ", kMaxThreads, ", got ", options.limit));
  }
  if (absl::Status s = ValidateStackKib(options.stack_kib); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(name_, ": ", s.message()));
  }
  started_ = true;
  options_ = options;
  absl::Status s = DoStart(options_);
  if (!s.ok()) Stop();
  return s;
}

absl::Status StrategyBase::RunBatch(const Workload& workload, int n, IoMode mode) {
  if (!started_ || stopped_) {
    return absl::FailedPreconditionError(
        absl::StrCat(name_, ": RunBatch needs a started strategy (", stopped_ ? "stopped" : "not started", ")"));
  }
  if (n < 0 || n > kMaxBatchTasks) {
    return absl::InvalidArgumentError(absl::StrCat(name_, ": n: 0 <= n <= ", kMaxBatchTasks, ", got ", n));
  }
  if (mode == IoMode::kSuspending && !unsupported_reason_.empty()) {
    return absl::UnimplementedError(
        absl::StrCat(name_, " has no suspending wait (io_mode suspending): ", unsupported_reason_));
  }
  if (n == 0) return absl::OkStatus();
  {
    std::lock_guard lock(failure_mu_);
    first_failure_ = absl::OkStatus();
  }
  absl::Status s = DoRunBatch(workload, n, mode);
  if (one_runner_) {
    // DoRunBatch returned after its tasks finished (the pool's latch orders their
    // writes before this read): publish the plain counters.
    if (one_peak_ > peak_in_flight_.load(std::memory_order_relaxed)) peak_in_flight_.store(one_peak_);
    sink_.fetch_add(one_sink_, std::memory_order_relaxed);
    one_sink_ = 0;
  }
  if (!s.ok()) return s;
  std::lock_guard lock(failure_mu_);
  return first_failure_;
}

void StrategyBase::Stop() {
  if (!started_ || stopped_) return;
  stopped_ = true;
  DoStop();
}

ThreadOptions StrategyBase::thread_options() const {
  return ThreadOptions{
      .stack_kib = options_.stack_kib, .on_thread_start = options_.on_thread_start, .name_prefix = thread_name_prefix_};
}

void StrategyBase::raise_threads_used(int threads) {
  int seen = threads_used_.load();
  while (seen < threads && !threads_used_.compare_exchange_weak(seen, threads)) {
  }
}

void StrategyBase::CallHook(const std::function<void(int)>& hook, int i, std::string_view which) {
  if (!hook) return;
  try {
    hook(i);
  } catch (const std::exception& e) {
    RecordTaskFailure(
        absl::InternalError(absl::StrCat(name_, ": ", std::string(which), " hook threw for task ", i, ": ", e.what())));
  } catch (...) {
    RecordTaskFailure(absl::InternalError(absl::StrCat(name_, ": ", std::string(which), " hook threw for task ", i)));
  }
}

void StrategyBase::BeginTask(int i) {
  CallHook(options_.on_task_start, i, "on_task_start");
  if (one_runner_) {
    one_peak_ = 1;  // one task at a time
    return;
  }
  const int now = in_flight_.fetch_add(1, std::memory_order_relaxed) + 1;
  int peak = peak_in_flight_.load(std::memory_order_relaxed);
  while (peak < now && !peak_in_flight_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

void StrategyBase::ComputeTask(const Workload& workload, int i) {
  try {
    if (one_runner_) {
      one_sink_ += workload.Compute(i);
    } else {
      sink_.fetch_add(workload.Compute(i), std::memory_order_relaxed);
    }
  } catch (const std::bad_alloc&) {
    RecordTaskFailure(absl::ResourceExhaustedError(absl::StrCat(name_, ": task ", i, " ran out of memory")));
  } catch (const std::exception& e) {
    RecordTaskFailure(absl::InternalError(absl::StrCat(name_, ": task ", i, " failed: ", e.what())));
  }
}

void StrategyBase::EndTask(int i) {
  if (!one_runner_) in_flight_.fetch_sub(1, std::memory_order_relaxed);
  CallHook(options_.on_task_end, i, "on_task_end");
}

void StrategyBase::RunBlockingTask(const Workload& workload, int i) {
  BeginTask(i);
  ComputeTask(workload, i);
  BlockingWait(workload.Wait(i));
  EndTask(i);
}

void StrategyBase::RecordTaskFailure(absl::Status status) {
  std::lock_guard lock(failure_mu_);
  if (first_failure_.ok()) first_failure_ = std::move(status);
}

absl::Status StrategyBase::RunBlockingOnExecutor(Executor& executor, const Workload& workload, int n) {
  std::latch done(n);
  for (int i = 0; i < n; ++i) {
    absl::Status s = executor.Submit([this, &workload, &done, i] {
      RunBlockingTask(workload, i);
      done.count_down();
    });
    if (!s.ok()) {
      done.count_down(n - i);
      done.wait();
      return s;
    }
  }
  done.wait();
  return absl::OkStatus();
}

}  // namespace fleetmark::engine
