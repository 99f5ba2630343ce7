// elastic_pool: a cached pool that reuses idle threads and grows to a cap (Rx io,
// Dispatchers.IO). Threads are created on demand during the first batches (the runner's
// warm-up), then reused; tasks beyond the cap queue.
#include "engine/strategies/adapters.h"
#include "engine/strategies/executors/elastic_pool.h"
#include "engine/strategies/strategy_base.h"

namespace fleetmark::engine {
namespace {

constexpr int kDefaultElasticCap = 64;

class ElasticPoolStrategy final : public StrategyBase {
 public:
  ElasticPoolStrategy()
      : StrategyBase("elastic_pool", "fm-elastic", "its tasks run on pool OS threads, which can only block") {}
  ~ElasticPoolStrategy() override { Stop(); }

 protected:
  absl::Status DoStart(const StrategyOptions& options) override {
    return pool_.Start(options.threads > 0 ? options.threads : kDefaultElasticCap, thread_options());
  }
  absl::Status DoRunBatch(const Workload& workload, int n, IoMode) override {
    absl::Status s = RunBlockingOnExecutor(pool_, workload, n);
    raise_threads_used(pool_.threads_created());
    return s;
  }
  void DoStop() override { pool_.Stop(); }

 private:
  ElasticPool pool_;
};

}  // namespace

std::unique_ptr<Strategy> NewElasticPoolStrategy() { return std::make_unique<ElasticPoolStrategy>(); }

}  // namespace fleetmark::engine
