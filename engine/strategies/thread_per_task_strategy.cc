// thread_per_task: a new OS thread (pthread, so stack_kib applies) for every task,
// joined at the end of the batch. Creating the threads is the strategy, so it happens
// inside RunBatch. When the system refuses a thread (EAGAIN: thread or process limit,
// address space for stacks) the batch joins what it created and returns
// ResourceExhausted.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/strategies/adapters.h"
#include "engine/strategies/executors/run_guarded.h"
#include "engine/strategies/executors/os_thread.h"
#include "engine/strategies/strategy_base.h"

namespace fleetmark::engine {
namespace {

class ThreadPerTaskStrategy final : public StrategyBase {
 public:
  ThreadPerTaskStrategy()
      : StrategyBase("thread_per_task", "fm-task", "each task owns an OS thread, which can only block") {}
  ~ThreadPerTaskStrategy() override { Stop(); }

 protected:
  absl::Status DoStart(const StrategyOptions&) override { return absl::OkStatus(); }

  absl::Status DoRunBatch(const Workload& workload, int n, IoMode) override {
    std::vector<OsThread> threads;
    threads.reserve(n);
    absl::Status failure;
    for (int i = 0; i < n; ++i) {
      auto thread = StartThread(
          options().stack_kib,
          [this, &workload, i] {
            if (options().on_thread_start) RunGuarded(options().on_thread_start, "on_thread_start");
            RunBlockingTask(workload, i);
          },
          "fm-task");
      if (!thread.ok()) {
        failure = absl::Status(thread.status().code(), absl::StrCat("thread_per_task: created ", i, " of ", n,
                                                                    " threads, then: ", thread.status().message()));
        break;
      }
      threads.push_back(*std::move(thread));
    }
    raise_threads_used(static_cast<int>(threads.size()));
    for (OsThread& t : threads) t.Join();
    return failure;
  }

  void DoStop() override {}
};

}  // namespace

std::unique_ptr<Strategy> NewThreadPerTaskStrategy() { return std::make_unique<ThreadPerTaskStrategy>(); }

}  // namespace fleetmark::engine
