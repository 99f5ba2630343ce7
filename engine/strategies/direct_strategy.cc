// direct: every task inline on the caller's thread (S1's "direct call").
#include "engine/strategies/adapters.h"
#include "engine/strategies/strategy_base.h"

namespace fleetmark::engine {
namespace {

class DirectStrategy final : public StrategyBase {
 public:
  DirectStrategy()
      : StrategyBase("direct", "fm-direct",
                     "it runs each task inline on the caller's thread, which can only "
                     "block") {}
  ~DirectStrategy() override { Stop(); }

 protected:
  absl::Status DoStart(const StrategyOptions&) override {
    set_threads_used(0);
    return absl::OkStatus();
  }
  absl::Status DoRunBatch(const Workload& workload, int n, IoMode) override {
    for (int i = 0; i < n; ++i) RunBlockingTask(workload, i);
    return absl::OkStatus();
  }
  void DoStop() override {}
};

}  // namespace

std::unique_ptr<Strategy> NewDirectStrategy() { return std::make_unique<DirectStrategy>(); }

}  // namespace fleetmark::engine
