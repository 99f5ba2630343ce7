// Helpers shared by the strategy tests: a workload with a fixed wait, per-index task
// counters fed by the strategy hooks, OS thread counting and process CPU time.
#pragma once

#include <dirent.h>
#include <time.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <set>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "engine/strategies/strategy.h"
#include "engine/workloads/workload.h"
#include "gtest/gtest.h"

namespace fleetmark::engine::testing {

// Every task computes i and waits `wait`.
class FixedWaitWorkload final : public Workload {
 public:
  explicit FixedWaitWorkload(absl::Duration wait) : wait_(wait) {}
  std::string_view name() const override { return "fixed_wait"; }
  uint64_t Compute(int i) const override { return static_cast<uint64_t>(i); }
  absl::Duration Wait(int) const override { return wait_; }

 private:
  absl::Duration wait_;
};

// Counts hook calls per task index and the largest number of tasks seen in flight,
// and remembers which threads the strategy announced through on_thread_start.
class HookRecorder {
 public:
  explicit HookRecorder(int n) : starts_(n), ends_(n) {}

  StrategyOptions Options(int threads) {
    StrategyOptions o;
    o.threads = threads;
    o.on_thread_start = [this] {
      std::lock_guard lock(mu_);
      announced_.insert(std::this_thread::get_id());
      ++thread_starts_;
    };
    o.on_task_start = [this](int i) {
      if (i >= 0 && i < static_cast<int>(starts_.size())) starts_[i].fetch_add(1);
      const int now = in_flight_.fetch_add(1) + 1;
      int peak = peak_.load();
      while (peak < now && !peak_.compare_exchange_weak(peak, now)) {
      }
      std::lock_guard lock(mu_);
      ran_on_.insert(std::this_thread::get_id());
    };
    o.on_task_end = [this](int i) {
      in_flight_.fetch_sub(1);
      if (i >= 0 && i < static_cast<int>(ends_.size())) ends_[i].fetch_add(1);
    };
    return o;
  }

  // Expects every index to have started and ended exactly `times` times.
  void ExpectEachTask(int times) const {
    for (size_t i = 0; i < starts_.size(); ++i) {
      ASSERT_EQ(starts_[i].load(), times) << "task " << i << " started";
      ASSERT_EQ(ends_[i].load(), times) << "task " << i << " ended";
    }
  }

  int peak() const { return peak_.load(); }
  int thread_starts() {
    std::lock_guard lock(mu_);
    return thread_starts_;
  }
  // True if every thread that ran a task announced itself first.
  bool TasksRanOnAnnouncedThreads() {
    std::lock_guard lock(mu_);
    for (auto id : ran_on_) {
      if (!announced_.count(id)) return false;
    }
    return true;
  }

 private:
  std::vector<std::atomic<int>> starts_;
  std::vector<std::atomic<int>> ends_;
  std::atomic<int> in_flight_{0};
  std::atomic<int> peak_{0};
  std::mutex mu_;
  std::set<std::thread::id> announced_;
  std::set<std::thread::id> ran_on_;
  int thread_starts_ = 0;
};

// Number of OS threads of this process (entries of /proc/self/task).
inline int CountThreads() {
  int n = 0;
  if (DIR* dir = opendir("/proc/self/task")) {
    while (dirent* e = readdir(dir)) {
      if (e->d_name[0] != '.') ++n;
    }
    closedir(dir);
  }
  return n;
}

// Waits up to `timeout` for the thread count to drop to `expected` (threads that were
// joined may take a moment to leave /proc on a loaded machine).
inline int WaitForThreadCount(int expected, absl::Duration timeout = absl::Seconds(2)) {
  const absl::Time deadline = absl::Now() + timeout;
  int n = CountThreads();
  while (n > expected && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(10));
    n = CountThreads();
  }
  return n;
}

inline absl::Duration ProcessCpuTime() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return absl::DurationFromTimespec(ts);
}

inline bool UnderThreadSanitizer() {
#if defined(__SANITIZE_THREAD__)
  return true;
#else
  return false;
#endif
}

// Why strategy `name` cannot be checked under ThreadSanitizer, or "" if it can:
// Boost.Context switches stacks without TSan annotations, and Debian's libtbb and GCC's
// libgomp are not instrumented, so TSan cannot see their synchronisation (libgomp's
// barriers and task queue are futexes and atomics built without -fsanitize=thread) and
// reports every hand-off between their threads as a race. std_par runs on libtbb as
// work_stealing does (checked 2026-12-07: TSan reports the arena's enqueue hand-off in
// its warm-up, work_stealing_strategy.cc, as a race while every std_par test passes).
inline std::string_view TsanSkipReason(std::string_view name) {
  if (!UnderThreadSanitizer()) return "";
  if (name == "fiber") return "Boost.Context switches stacks without TSan annotations";
  if (name == "work_stealing" || name == "std_par") return "libtbb is not TSan-instrumented (false reports)";
  if (name.substr(0, 7) == "openmp_") return "libgomp is not TSan-instrumented (false reports)";
  return "";
}

inline bool UnderAddressSanitizer() {
#if defined(__SANITIZE_ADDRESS__)
  return true;
#else
  return false;
#endif
}

// Runs `body` here, or, when `isolate`, in a death-test child process that must exit
// with 0 (no test failure inside): a fibre work-stealing group can be built once per
// process. Set death_test_style "threadsafe" in the suite.
template <typename Body>
void RunIsolatedIf(bool isolate, Body body) {
  if (!isolate) {
    body();
    return;
  }
  EXPECT_EXIT(
      {
        body();
        std::_Exit(::testing::Test::HasFailure() ? 1 : 0);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace fleetmark::engine::testing
