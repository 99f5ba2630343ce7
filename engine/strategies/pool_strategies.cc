// single_thread and fixed_pool: a ThreadPool of 1 or N threads with one FIFO queue
// (Rx single / newFixedThreadPool).
#include "engine/strategies/adapters.h"
#include "engine/strategies/executors/os_thread.h"
#include "engine/strategies/executors/thread_pool.h"
#include "engine/strategies/strategy_base.h"

namespace fleetmark::engine {
namespace {

// Why each has no suspending wait, in its own words: single_thread has one worker, not
// a pool.
constexpr char kPoolUnsupported[] = "its tasks run on pool OS threads, which can only block";
constexpr char kSingleThreadUnsupported[] = "its tasks run on its one worker OS thread, which can only block";

class PoolStrategy final : public StrategyBase {
 public:
  // `fixed_threads` > 0 pins the pool size (single_thread); 0 = options.threads.
  // `unsupported_reason`: why io_mode suspending is unsupported (StrategyBase).
  PoolStrategy(std::string_view name, std::string_view prefix, int fixed_threads, std::string_view unsupported_reason)
      : StrategyBase(name, prefix, unsupported_reason), fixed_threads_(fixed_threads) {}
  ~PoolStrategy() override { Stop(); }

 protected:
  absl::Status DoStart(const StrategyOptions& options) override {
    int threads = fixed_threads_;
    if (threads == 0) threads = options.threads > 0 ? options.threads : LogicalCpuCount();
    absl::Status s = pool_.Start(threads, thread_options());
    if (s.ok()) set_threads_used(pool_.size());
    return s;
  }
  absl::Status DoRunBatch(const Workload& workload, int n, IoMode) override {
    return RunBlockingOnExecutor(pool_, workload, n);
  }
  void DoStop() override { pool_.Stop(); }

 private:
  const int fixed_threads_;
  ThreadPool pool_;
};

}  // namespace

std::unique_ptr<Strategy> NewSingleThreadStrategy() {
  return std::make_unique<PoolStrategy>("single_thread", "fm-single", 1, kSingleThreadUnsupported);
}
std::unique_ptr<Strategy> NewFixedPoolStrategy() {
  return std::make_unique<PoolStrategy>("fixed_pool", "fm-pool", 0, kPoolUnsupported);
}

}  // namespace fleetmark::engine
