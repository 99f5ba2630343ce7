// limited: a shared pool capped to `threads` tasks in flight (Kotlin's
// Dispatchers.Default.limitedParallelism(n)); excess tasks wait in the Limiter's queue
// without holding a pool thread.
#include <algorithm>
#include <memory>

#include "engine/strategies/adapters.h"
#include "engine/strategies/executors/limiter.h"
#include "engine/strategies/executors/os_thread.h"
#include "engine/strategies/executors/thread_pool.h"
#include "engine/strategies/strategy_base.h"

namespace fleetmark::engine {
namespace {

class LimitedStrategy final : public StrategyBase {
 public:
  LimitedStrategy() : StrategyBase("limited", "fm-limited", "its tasks run on pool OS threads, which can only block") {}
  ~LimitedStrategy() override { Stop(); }

 protected:
  absl::Status DoStart(const StrategyOptions& options) override {
    const int cpus = LogicalCpuCount();
    const int cap = options.threads > 0 ? options.threads : std::max(1, cpus / 2);
    const int pool_size = options.limit > 0 ? options.limit : std::max(cpus, cap);
    absl::Status s = pool_.Start(pool_size, thread_options());
    if (!s.ok()) return s;
    limiter_ = std::make_unique<Limiter>(&pool_, cap);
    set_threads_used(pool_.size());
    return absl::OkStatus();
  }
  absl::Status DoRunBatch(const Workload& workload, int n, IoMode) override {
    return RunBlockingOnExecutor(*limiter_, workload, n);
  }
  void DoStop() override {
    pool_.Stop();
    limiter_.reset();
  }

 private:
  ThreadPool pool_;
  std::unique_ptr<Limiter> limiter_;
};

}  // namespace

std::unique_ptr<Strategy> NewLimitedStrategy() { return std::make_unique<LimitedStrategy>(); }

}  // namespace fleetmark::engine
