// Child side of the memory scenario: hold N waiting tasks and measure the process.
#include <utility>  // before Boost 1.74 asio/awaitable.hpp, which needs std::exchange
#include <alloca.h>
#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/context/stack_traits.hpp>
#include <boost/fiber/condition_variable.hpp>
#include <boost/fiber/mutex.hpp>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "engine/common/status_macros.h"
#include "engine/scenarios/executor_options.h"
#include "engine/measure/process_stats.h"
#include "engine/scenarios/memory_scenario.h"
#include "engine/scenarios/params.h"
#include "engine/scenarios/resource_limits.h"
#include "engine/scenarios/smaps_rollup.h"
#include "engine/strategies/carrier.h"
#include "engine/strategies/executors/asio_runner.h"
#include "engine/strategies/executors/fiber_runner.h"
#include "engine/strategies/executors/os_thread.h"
#include "engine/strategies/registry.h"
#include "engine/common/steady_wait.h"

namespace fleetmark::engine {
namespace {

namespace asio = boost::asio;

// Writes one byte per page of `kib` KiB of fresh stack below the caller's frame, so
// those pages become resident. noinline: the frame must really be on this stack.
[[gnu::noinline]] void TouchStack(uint32_t kib) {
  if (kib == 0) return;
  const size_t bytes = size_t{kib} * 1024;
  volatile char* area = static_cast<volatile char*>(alloca(bytes));
  for (size_t offset = 0; offset < bytes; offset += 4096) area[offset] = 1;
  area[bytes - 1] = 1;
}

// The N tasks' shared state: how many started and finished, and the release gate
// for blocking waits. The gate is std::mutex/std::condition_variable, not absl (the
// mutex convention's exception, docs/contributing.md): the held tasks are what this
// point measures, and an absl wait would add Abseil's per-thread state to each task.
struct Progress {
  std::atomic<int64_t> started{0};
  std::atomic<int64_t> finished{0};
  std::mutex mu;
  std::condition_variable cv;
  bool released = false;  // guarded by mu

  void Release() {
    {
      std::lock_guard<std::mutex> lock(mu);
      released = true;
    }
    cv.notify_all();
  }
  void BlockUntilReleased() {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [this] { return released; });
  }
};

// Holds N tasks of one strategy. Start creates them (they wait); Release lets them
// finish and joins every thread that was created.
class TaskHolder {
 public:
  virtual ~TaskHolder() = default;
  // Starts up to n tasks; returns ResourceExhausted when the system refuses (tasks
  // already started keep waiting until Release). `check` is called periodically and
  // may abort the start with its status (the memory cap).
  virtual absl::Status Start(int64_t n, const std::function<absl::Status()>& check) = 0;
  virtual void Release() = 0;
  Progress progress;
};

class ThreadHolder final : public TaskHolder {
 public:
  ThreadHolder(uint32_t stack_kib, uint32_t touch_kib) : stack_kib_(stack_kib), touch_kib_(touch_kib) {}
  ~ThreadHolder() override { Release(); }
  absl::Status Start(int64_t n, const std::function<absl::Status()>& check) override {
    threads_.reserve(n);
    for (int64_t i = 0; i < n; ++i) {
      if (i % 256 == 255) FLEETMARK_RETURN_IF_ERROR(check());
      absl::StatusOr<OsThread> t = StartThread(static_cast<int>(stack_kib_), [this] {
        TouchStack(touch_kib_);
        progress.started.fetch_add(1);
        progress.BlockUntilReleased();
        progress.finished.fetch_add(1);
      });
      if (!t.ok()) {
        return absl::Status(t.status().code(), absl::StrCat("thread ", i + 1, " of ", n, ": ", t.status().message()));
      }
      threads_.push_back(*std::move(t));
    }
    return absl::OkStatus();
  }
  void Release() override {
    progress.Release();
    for (OsThread& t : threads_) t.Join();
    threads_.clear();
  }

 private:
  uint32_t stack_kib_, touch_kib_;
  std::vector<OsThread> threads_;
};

// A pool of N threads (the strategy's carrier, sized per point), one task each.
class PoolHolder final : public TaskHolder {
 public:
  PoolHolder(const StrategyTraits& strategy, uint32_t stack_kib, uint32_t touch_kib)
      : strategy_(strategy), stack_kib_(stack_kib), touch_kib_(touch_kib) {}
  ~PoolHolder() override { Release(); }
  absl::Status Start(int64_t n, const std::function<absl::Status()>& check) override {
    FLEETMARK_ASSIGN_OR_RETURN(pool_, StartCarrier(strategy_, static_cast<int>(n), ScenarioThreadOptions(stack_kib_)));
    FLEETMARK_RETURN_IF_ERROR(check());
    for (int64_t i = 0; i < n; ++i) {
      FLEETMARK_RETURN_IF_ERROR(pool_->executor().Submit([this] {
        TouchStack(touch_kib_);
        progress.started.fetch_add(1);
        progress.BlockUntilReleased();
        progress.finished.fetch_add(1);
      }));
    }
    return absl::OkStatus();
  }
  void Release() override {
    progress.Release();
    if (pool_ != nullptr) pool_->Stop();
  }

 private:
  const StrategyTraits& strategy_;
  uint32_t stack_kib_, touch_kib_;
  std::unique_ptr<StrategyCarrier> pool_;
};

class FiberHolder final : public TaskHolder {
 public:
  FiberHolder(const StrategyTraits& strategy, int threads, uint32_t stack_kib, uint32_t touch_kib)
      : strategy_(strategy), threads_(threads), stack_kib_(stack_kib), touch_kib_(touch_kib) {}
  ~FiberHolder() override { Release(); }
  absl::Status Start(int64_t n, const std::function<absl::Status()>& check) override {
    FLEETMARK_ASSIGN_OR_RETURN(carrier_, StartCarrier(strategy_, threads_, ScenarioThreadOptions(stack_kib_)));
    started_runner_ = true;
    FLEETMARK_RETURN_IF_ERROR(check());
    return carrier_->fibres()->Launch(static_cast<int>(n), [this](int) {
      TouchStack(touch_kib_);
      progress.started.fetch_add(1);
      std::unique_lock<boost::fibers::mutex> lock(mu_);
      cv_.wait(lock, [this] { return released_; });
      lock.unlock();
      progress.finished.fetch_add(1);
    });
  }
  void Release() override {
    if (started_runner_) {
      // The gate is a fibre mutex: open it from a fibre of the runner.
      absl::Status s = carrier_->executor().Submit([this] {
        std::lock_guard<boost::fibers::mutex> lock(mu_);
        released_ = true;
        cv_.notify_all();
      });
      (void)s;  // not running: there is nothing to release
      started_runner_ = false;
    }
    if (carrier_ != nullptr) carrier_->Stop();
  }

 private:
  const StrategyTraits& strategy_;
  int threads_;
  uint32_t stack_kib_, touch_kib_;
  std::unique_ptr<StrategyCarrier> carrier_;
  bool started_runner_ = false;
  boost::fibers::mutex mu_;
  boost::fibers::condition_variable cv_;
  bool released_ = false;  // guarded by mu_
};

// Coroutines (awaitable) or plain callbacks waiting on one never-expiring timer per
// io_context; Release cancels the timers, which completes every wait.
class AsioHolder final : public TaskHolder {
 public:
  AsioHolder(const StrategyTraits& strategy, int threads)
      : strategy_(strategy), threads_(threads), coroutines_(strategy.carrier == Carrier::kAsioCoroutine) {}
  ~AsioHolder() override { Release(); }
  absl::Status Start(int64_t n, const std::function<absl::Status()>& check) override {
    FLEETMARK_ASSIGN_OR_RETURN(carrier_, StartCarrier(strategy_, threads_));
    runner_ = carrier_->asio();
    for (int k = 0; k < runner_->size(); ++k) {
      gates_.push_back(
          std::make_unique<asio::steady_timer>(runner_->context(k), asio::steady_timer::time_point::max()));
    }
    for (int64_t i = 0; i < n; ++i) {
      if (i % 4096 == 4095) FLEETMARK_RETURN_IF_ERROR(check());
      asio::steady_timer& gate = *gates_[i % gates_.size()];
      asio::io_context& ctx = runner_->context(static_cast<int>(i % gates_.size()));
      if (coroutines_) {
        asio::co_spawn(ctx, Hold(gate), asio::detached);
      } else {
        asio::post(ctx, [this, &gate] {
          progress.started.fetch_add(1);
          gate.async_wait([this](const boost::system::error_code&) { progress.finished.fetch_add(1); });
        });
      }
    }
    return absl::OkStatus();
  }
  void Release() override {
    if (runner_ == nullptr) return;
    for (size_t k = 0; k < gates_.size(); ++k) {
      asio::post(runner_->context(static_cast<int>(k)), [gate = gates_[k].get()] { gate->cancel(); });
    }
    // Stop drops handlers not yet run: let the released waits finish first.
    const absl::Time deadline = SteadyNow() + absl::Seconds(30);
    while (progress.finished.load() < progress.started.load() && SteadyNow() < deadline) {
      absl::SleepFor(absl::Milliseconds(2));
    }
    // A timer must die before its io_context: destroy each on its own thread.
    std::atomic<size_t> destroyed{0};
    for (size_t k = 0; k < gates_.size(); ++k) {
      asio::post(runner_->context(static_cast<int>(k)), [this, k, &destroyed] {
        gates_[k].reset();
        destroyed.fetch_add(1);
      });
    }
    // No deadline: the runner's threads run nothing else, so these handlers do run.
    while (destroyed.load() < gates_.size()) absl::SleepFor(absl::Milliseconds(1));
    carrier_->Stop();
    runner_ = nullptr;
    gates_.clear();
  }

 private:
  asio::awaitable<void> Hold(asio::steady_timer& gate) {
    progress.started.fetch_add(1);
    boost::system::error_code ec;
    co_await gate.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    progress.finished.fetch_add(1);
  }

  const StrategyTraits& strategy_;
  int threads_;
  bool coroutines_;
  std::unique_ptr<StrategyCarrier> carrier_;
  AsioRunner* runner_ = nullptr;  // carrier_'s, while started
  std::vector<std::unique_ptr<asio::steady_timer>> gates_;
};

absl::StatusOr<std::unique_ptr<TaskHolder>> MakeHolder(const v1::CaseSpec& spec, const MemoryConfig& config) {
  const std::string& name = spec.strategy().name();
  const bool suspending = spec.io_mode() == "suspending";
  const int carriers = config.threads > 0 ? config.threads : LogicalCpuCount();
  const StrategyTraits* strategy = FindStrategy(name);
  if (strategy != nullptr && IsMemoryThreadPerTask(*strategy)) {
    if (suspending) {
      return absl::UnimplementedError(
          absl::StrCat(name, " has no suspending wait: its tasks can only block their OS thread"));
    }
    if (strategy->carrier == Carrier::kPool && config.threads != 0) {
      return absl::UnimplementedError(absl::StrCat("memory keeps N tasks blocked at once, so ", name,
                                                   " is sized N per point "
                                                   "(S2's pooled threads): leave strategy.threads at 0"));
    }
    if (strategy->carrier == Carrier::kThreadPerTask) {
      return std::make_unique<ThreadHolder>(config.stack_kib, config.touch_stack_kib);
    }
    return std::make_unique<PoolHolder>(*strategy, config.stack_kib, config.touch_stack_kib);
  }
  if (strategy != nullptr && strategy->suspending) {
    if (!suspending) {
      return absl::UnimplementedError(absl::StrCat("memory with blocking waits on ", name, " would park its ", carriers,
                                                   " carrier threads after ", carriers,
                                                   " tasks; use io_mode suspending"));
    }
    if (strategy->carrier == Carrier::kFiber) {
      return std::make_unique<FiberHolder>(*strategy, carriers, config.stack_kib, config.touch_stack_kib);
    }
    return std::make_unique<AsioHolder>(*strategy, carriers);
  }
  return absl::UnimplementedError(
      absl::StrCat("memory supports ", StrategyNames(IsMemoryThreadPerTask), " (blocking) and ",
                   StrategyNames([](const StrategyTraits& s) { return s.suspending; }, ", "), " (suspending); ", name,
                   " never holds N tasks waiting at once"));
}

v1::MemoryPoint FailedPoint(uint32_t n, const absl::Status& status, v1::CaseStatus code) {
  v1::MemoryPoint point;
  point.set_tasks(n);
  point.set_status(code);
  point.set_message(std::string(status.message()));
  return point;
}

}  // namespace

absl::StatusOr<std::string> MemoryPointChild(std::string_view request) {
  v1::CaseSpec spec;
  if (!spec.ParseFromArray(request.data(), static_cast<int>(request.size()))) {
    return absl::InvalidArgumentError("memory point: request is not a CaseSpec");
  }
  FLEETMARK_ASSIGN_OR_RETURN(MemoryConfig config, ResolveMemoryConfig(spec));
  if (config.task_counts.size() != 1) {
    return absl::InvalidArgumentError("memory point: memory.task_counts must hold one N");
  }
  const uint32_t n = config.task_counts[0];
  FLEETMARK_ASSIGN_OR_RETURN(std::unique_ptr<TaskHolder> holder, MakeHolder(spec, config));
  FLEETMARK_ASSIGN_OR_RETURN(MemoryFootprint baseline, ReadMemoryFootprint());
  const absl::StatusOr<uint64_t> kernel_baseline = ReadKernelStackBytes();

  const absl::Time deadline = SteadyNow() + config.point_timeout * 0.9;  // steady: a wall step moves no deadline
  const uint64_t cap = config.max_memory_bytes;
  auto check = [&]() -> absl::Status {
    absl::StatusOr<uint64_t> rss = ReadRssBytes();
    if (rss.ok() && *rss > baseline.rss_bytes && *rss - baseline.rss_bytes > cap) {
      return absl::ResourceExhaustedError(absl::StrCat("stopped at ", holder->progress.started.load(), " of ", n,
                                                       " tasks: ", (*rss - baseline.rss_bytes) >> 20,
                                                       " MiB exceeds memory.max_memory_mib = ", cap >> 20));
    }
    if (SteadyNow() > deadline) {
      return absl::DeadlineExceededError(absl::StrCat("only ", holder->progress.started.load(), " of ", n,
                                                      " tasks started within ",
                                                      absl::FormatDuration(config.point_timeout * 0.9)));
    }
    return absl::OkStatus();
  };

  absl::Status started = holder->Start(n, check);
  while (started.ok() && holder->progress.started.load() < n) {
    started = check();
    absl::SleepFor(absl::Milliseconds(2));
  }
  v1::MemoryPoint point;
  if (!started.ok()) {
    const v1::CaseStatus code = absl::IsDeadlineExceeded(started)    ? v1::CASE_STATUS_TIMEOUT
                                : absl::IsResourceExhausted(started) ? v1::CASE_STATUS_RESOURCE_EXHAUSTED
                                                                     : v1::CASE_STATUS_FAILED;
    point = FailedPoint(n, started, code);
  } else {
    // All N are waiting (their wait is registered in the same step as `started`).
    absl::SleepFor(absl::Milliseconds(20));
    FLEETMARK_ASSIGN_OR_RETURN(MemoryFootprint now, ReadMemoryFootprint());
    point.set_tasks(n);
    point.set_status(v1::CASE_STATUS_OK);
    point.set_rss_bytes(now.rss_bytes);
    point.set_pss_bytes(now.has_rollup ? now.pss_bytes : 0);
    point.set_uss_bytes(now.has_rollup ? now.uss_bytes : 0);
    if (const absl::StatusOr<uint64_t> kernel = ReadKernelStackBytes(); kernel.ok() && kernel_baseline.ok()) {
      point.set_kernel_stack_delta_bytes(static_cast<int64_t>(*kernel) - static_cast<int64_t>(*kernel_baseline));
    }
  }
  point.set_baseline_rss_bytes(baseline.rss_bytes);
  holder->Release();
  return point.SerializeAsString();
}

TaskStack DescribeTaskStack(std::string_view name, uint32_t stack_kib) {
  TaskStack stack;
  const StrategyTraits* strategy = FindStrategy(name);
  const Carrier carrier = strategy != nullptr ? strategy->carrier : Carrier::kThreadPerTask;
  if (carrier == Carrier::kFiber) {
    stack.kib = stack_kib != 0 ? stack_kib : static_cast<uint32_t>(boost::context::stack_traits::default_size() / 1024);
    stack.source = absl::StrCat("Boost.Fiber stack allocator, ", stack.kib, " KiB",
                                stack_kib == 0 ? " (Boost default)" : " (strategy.stack_kib)");
  } else if (carrier == Carrier::kAsioCoroutine) {
    stack.source = "stackless C++20 coroutine frame on the heap (no stack per task)";
  } else if (carrier == Carrier::kAsioCallback) {
    stack.source = "pending Asio callback on the heap (no stack per task)";
  } else {
    if (stack_kib != 0) {
      stack.kib = stack_kib;
      stack.source = absl::StrCat("pthread_attr_setstacksize ", stack_kib, " KiB (strategy.stack_kib)");
    } else {
      pthread_attr_t attr;
      size_t bytes = 0;
      if (pthread_getattr_default_np(&attr) == 0) {
        pthread_attr_getstacksize(&attr, &bytes);
        pthread_attr_destroy(&attr);
      }
      stack.kib = static_cast<uint32_t>(bytes / 1024);
      stack.source =
          absl::StrCat("glibc default thread stack ", stack.kib, " KiB (reserved; only touched pages are resident)");
    }
  }
  return stack;
}

}  // namespace fleetmark::engine
