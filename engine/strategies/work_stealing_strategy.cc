// work_stealing: oneTBB. A task_arena(n, 0) — n worker slots, none reserved for the
// caller, so the caller never runs tasks — receives each batch as one enqueued root
// task, which forks the n tasks into a task_group: they land on that worker's deque
// and idle workers steal them (the ForkJoin / newWorkStealingPool pattern).
//
// std_par: the same arena, warm-up and teardown; the root task calls
// std::for_each(std::execution::par) over the batch's indices instead. libstdc++'s
// parallel algorithms run on oneTBB (its TBB backend: tbb::parallel_for), inside the
// arena the call is made from, so `threads` sizes them as it sizes work_stealing.
// par_unseq is not offered: a task may block and its hooks take locks, which
// par_unseq's element functions must not (vectorization-unsafe).
//
// oneTBB pitfalls handled here:
//  * The process-wide worker limit (global_control::max_allowed_parallelism, default
//    = CPUs, i.e. CPUs - 1 workers) caps every arena, so an arena of 100 would get
//    only CPUs - 1 workers. The strategy holds a global_control raising it to n + 1
//    while it runs (this also lifts the cap for other arenas in the process meanwhile).
//  * Workers belong to TBB's global pool, not the arena; Start warms them up (every
//    slot occupied once, so thread creation stays out of the timed batches), and Stop
//    calls tbb::finalize with a task_scheduler_handle so the workers are joined.
//  * Stop finalizes *before* it drops the global_control. When the process may use one
//    CPU (taskset, cpusets, a single-core board), TBB's own limit is 1, i.e. zero
//    workers; dropping our raised limit back to zero while workers are still leaving
//    the just-destroyed arena leaves that arena's references held for good in oneTBB
//    2021.8, and finalize's blocking terminate then waits for them forever
//    (sched_yield at 100 % of a core). Joined first, no worker is left to strand.
//  * on_thread_start runs via a task_scheduler_observer on the arena, the first time
//    each worker enters it, before that worker runs any task.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <execution>
#include <latch>
#include <memory>
#include <mutex>
#include <new>
#include <thread>
#include <unordered_set>
#include <vector>

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>
#include <oneapi/tbb/task_scheduler_observer.h>
#include <oneapi/tbb/version.h>

#include "absl/strings/str_cat.h"
#include "engine/strategies/adapters.h"
#include "engine/strategies/executors/run_guarded.h"
#include "engine/strategies/executors/os_thread.h"
#include "engine/strategies/strategy_base.h"
#include "engine/strategies/work_stealing_implementation.h"

// std_par's threads_used counts the arena's workers, which is the truth only when
// libstdc++'s parallel algorithms run on oneTBB: libstdc++ picks its TBB backend when
// <tbb/tbb.h> is on the include path (the host's libtbb-dev, the device builds' static
// oneTBB), else a serial one that would run every batch on one thread.
#if defined(__GLIBCXX__) && !defined(_PSTL_PAR_BACKEND_TBB)
#error "std_par: libstdc++'s parallel algorithms have no TBB backend in this build (<tbb/tbb.h> not found)"
#endif

namespace fleetmark::engine {
namespace {

// How long Start waits for TBB to bring every arena slot's worker in: at most
// kWarmUpDeadline in all, and no longer than kWarmUpStall after the last new arrival.
constexpr auto kWarmUpDeadline = std::chrono::seconds(10);
constexpr auto kWarmUpStall = std::chrono::seconds(1);

// Calls `hook` once per distinct thread entering the arena, and counts them.
class FirstEntryObserver final : public tbb::task_scheduler_observer {
 public:
  FirstEntryObserver(tbb::task_arena& arena, std::function<void()> hook)
      : tbb::task_scheduler_observer(arena), hook_(std::move(hook)) {
    observe(true);
  }
  ~FirstEntryObserver() override { observe(false); }

  void on_scheduler_entry(bool) override {
    {
      std::lock_guard lock(mu_);
      if (!seen_.insert(std::this_thread::get_id()).second) return;
    }
    if (hook_) RunGuarded(hook_, "on_thread_start");
  }

  int distinct_threads() {
    std::lock_guard lock(mu_);
    return static_cast<int>(seen_.size());
  }

 private:
  const std::function<void()> hook_;
  std::mutex mu_;
  std::unordered_set<std::thread::id> seen_;  // guarded by mu_
};

// How a batch is forked inside the arena.
enum class Fork {
  kTaskGroup,     // work_stealing: one tbb::task_group task per batch task
  kStdForEachPar  // std_par: std::for_each(std::execution::par) over the indices
};

class WorkStealingStrategy final : public StrategyBase {
 public:
  WorkStealingStrategy(std::string_view name, Fork fork)
      : StrategyBase(name, "fm-ws", "its tasks run on oneTBB worker OS threads, which can only block"), fork_(fork) {}
  ~WorkStealingStrategy() override { Stop(); }

 protected:
  absl::Status DoStart(const StrategyOptions& options) override {
    const int n = options.threads > 0 ? options.threads : LogicalCpuCount();
    try {
      handle_ = tbb::task_scheduler_handle(tbb::attach{});
      parallelism_ = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                                           static_cast<std::size_t>(n) + 1);
      if (options.stack_kib > 0) {
        stack_ = std::make_unique<tbb::global_control>(tbb::global_control::thread_stack_size,
                                                       static_cast<std::size_t>(options.stack_kib) * 1024);
      }
      arena_ = std::make_unique<tbb::task_arena>(n, 0);
      arena_->initialize();
      observer_ = std::make_unique<FirstEntryObserver>(*arena_, options.on_thread_start);
      WarmUp(n);
    } catch (const std::bad_alloc&) {
      return absl::ResourceExhaustedError(absl::StrCat(std::string(name()), ": out of memory starting oneTBB"));
    } catch (const std::exception& e) {
      return absl::ResourceExhaustedError(
          absl::StrCat(std::string(name()), ": cannot start oneTBB workers: ", e.what()));
    }
    set_threads_used(observer_->distinct_threads());
    return absl::OkStatus();
  }

  absl::Status DoRunBatch(const Workload& workload, int n, IoMode) override {
    if (fork_ == Fork::kStdForEachPar && static_cast<int>(indices_.size()) < n) {
      const int from = static_cast<int>(indices_.size());
      indices_.resize(n);
      for (int i = from; i < n; ++i) indices_[i] = i;
    }
    std::latch done(1);
    arena_->enqueue([this, &workload, &done, n] {
      try {
        if (fork_ == Fork::kStdForEachPar) {
          std::for_each(std::execution::par, indices_.begin(), indices_.begin() + n,
                        [this, &workload](int i) { RunBlockingTask(workload, i); });
        } else {
          tbb::task_group group;
          for (int i = 0; i < n; ++i) {
            group.run([this, &workload, i] { RunBlockingTask(workload, i); });
          }
          group.wait();
        }
      } catch (const std::exception& e) {
        RecordTaskFailure(
            absl::ResourceExhaustedError(absl::StrCat(std::string(name()), ": cannot spawn tasks: ", e.what())));
      }
      done.count_down();
    });
    done.wait();
    raise_threads_used(observer_->distinct_threads());
    return absl::OkStatus();
  }

  void DoStop() override {
    observer_.reset();
    arena_.reset();
    if (handle_) {
      // Joins TBB's worker threads unless another part of the process still uses TBB;
      // with our limits still in force (see the header comment).
      (void)tbb::finalize(handle_, std::nothrow);
    }
    stack_.reset();
    parallelism_.reset();
  }

 private:
  // Occupies all n slots at once so TBB creates the n workers now, untimed. Each
  // warm-up task waits (blocked) until all have arrived, or no new worker has arrived
  // for kWarmUpStall (oneTBB has a hard cap on its workers, which a large n may pass), or
  // kWarmUpDeadline has passed.
  void WarmUp(int n) {
    using Clock = std::chrono::steady_clock;
    std::mutex mu;
    std::condition_variable cv;
    int arrived = 0;
    bool gave_up = false;
    Clock::time_point last_arrival = Clock::now();
    std::latch finished(n);
    const Clock::time_point deadline = Clock::now() + kWarmUpDeadline;
    for (int k = 0; k < n; ++k) {
      arena_->enqueue([&] {
        {
          std::unique_lock lock(mu);
          ++arrived;
          last_arrival = Clock::now();
          cv.notify_all();
          // Tasks queued behind a capped worker pool find `gave_up` and return at once.
          while (arrived < n && !gave_up) {
            const Clock::time_point give_up = std::min(deadline, last_arrival + kWarmUpStall);
            if (Clock::now() >= give_up) {
              gave_up = true;
              cv.notify_all();
              break;
            }
            cv.wait_until(lock, give_up);
          }
        }
        finished.count_down();
      });
    }
    finished.wait();
  }

  const Fork fork_;
  std::vector<int> indices_;  // std_par: 0, 1, 2, ... (random-access, as the parallel algorithms need)
  tbb::task_scheduler_handle handle_;
  std::unique_ptr<tbb::global_control> parallelism_;
  std::unique_ptr<tbb::global_control> stack_;
  std::unique_ptr<tbb::task_arena> arena_;
  std::unique_ptr<FirstEntryObserver> observer_;
};

}  // namespace

std::unique_ptr<Strategy> NewWorkStealingStrategy() {
  return std::make_unique<WorkStealingStrategy>("work_stealing", Fork::kTaskGroup);
}
std::unique_ptr<Strategy> NewStdParStrategy() {
  return std::make_unique<WorkStealingStrategy>("std_par", Fork::kStdForEachPar);
}

std::string WorkStealingImplementationNote() {
  return absl::StrCat("work_stealing: oneTBB ", TBB_runtime_version(), " (", FLEETMARK_TBB_LINKAGE, ")");
}

}  // namespace fleetmark::engine
