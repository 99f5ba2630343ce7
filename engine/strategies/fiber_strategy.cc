// fiber: Boost.Fiber fibres on a FiberRunner (work-stealing scheduler over N threads,
// round-robin for N = 1) — the counterpart of Quasar fibres and virtual threads.
// Suspending wait: boost::this_fiber::sleep_for (the carrier runs other fibres);
// blocking wait: sleep on the carrier thread. A process can start one work-stealing
// group only (see executors/fiber_runner.h): run fibre cases in a child process.
#include <latch>
#include <thread>

#include <boost/fiber/operations.hpp>

#include "engine/strategies/adapters.h"
#include "engine/strategies/executors/fiber_runner.h"
#include "engine/strategies/runner_strategy.h"

namespace fleetmark::engine {
namespace {

class FiberStrategy final : public RunnerStrategy<FiberRunner> {
 public:
  FiberStrategy() : RunnerStrategy("fiber", "fm-fiber", "") {}

 protected:
  absl::Status DoRunBatch(const Workload& workload, int n, IoMode mode) override {
    std::latch done(n);
    absl::Status s = runner().Launch(n, [this, &workload, &done, mode](int i) {
      BeginTask(i);
      ComputeTask(workload, i);
      const absl::Duration wait = workload.Wait(i);
      if (wait > absl::ZeroDuration()) {
        if (mode == IoMode::kSuspending) {
          boost::this_fiber::sleep_for(absl::ToChronoNanoseconds(wait));
        } else {
          BlockingWait(wait);
        }
      }
      EndTask(i);
      done.count_down();
    });
    if (!s.ok()) return s;
    done.wait();
    return absl::OkStatus();
  }
};

}  // namespace

std::unique_ptr<Strategy> NewFiberStrategy() { return std::make_unique<FiberStrategy>(); }

}  // namespace fleetmark::engine
