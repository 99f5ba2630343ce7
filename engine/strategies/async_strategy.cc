// async: std::async(std::launch::async) per task, the C++ standard library's baseline
// (libstdc++ starts a new thread for each). A refused thread surfaces as
// std::system_error, returned as ResourceExhausted after the started tasks finish.
#include <future>
#include <new>
#include <system_error>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/strategies/adapters.h"
#include "engine/strategies/executors/run_guarded.h"
#include "engine/strategies/strategy_base.h"

namespace fleetmark::engine {
namespace {

class AsyncStrategy final : public StrategyBase {
 public:
  AsyncStrategy()
      : StrategyBase("async", "fm-async",
                     "std::async runs each task on its own OS thread, which can only "
                     "block") {}
  ~AsyncStrategy() override { Stop(); }

 protected:
  absl::Status DoStart(const StrategyOptions&) override { return absl::OkStatus(); }

  absl::Status DoRunBatch(const Workload& workload, int n, IoMode) override {
    std::vector<std::future<void>> futures;
    futures.reserve(n);
    absl::Status failure;
    for (int i = 0; i < n; ++i) {
      try {
        futures.push_back(std::async(std::launch::async, [this, &workload, i] {
          if (options().on_thread_start) RunGuarded(options().on_thread_start, "on_thread_start");
          RunBlockingTask(workload, i);
        }));
      } catch (const std::system_error& e) {
        failure = absl::ResourceExhaustedError(
            absl::StrCat("async: started ", i, " of ", n, " tasks, then std::async failed: ", e.what()));
        break;
      } catch (const std::bad_alloc&) {
        failure = absl::ResourceExhaustedError(
            absl::StrCat("async: started ", i, " of ", n, " tasks, then ran out of memory"));
        break;
      }
    }
    raise_threads_used(static_cast<int>(futures.size()));
    for (auto& f : futures) f.wait();
    return failure;
  }

  void DoStop() override {}
};

}  // namespace

std::unique_ptr<Strategy> NewAsyncStrategy() { return std::make_unique<AsyncStrategy>(); }

}  // namespace fleetmark::engine
