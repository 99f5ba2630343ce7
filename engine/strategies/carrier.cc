#include "engine/strategies/carrier.h"

#include <algorithm>
#include <string>
#include <type_traits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/strategies/executors/asio_runner.h"
#include "engine/strategies/executors/elastic_pool.h"
#include "engine/strategies/executors/fiber_runner.h"
#include "engine/strategies/executors/limiter.h"
#include "engine/strategies/executors/os_thread.h"
#include "engine/strategies/executors/thread_pool.h"
#include "engine/strategies/executors/work_stealing_arena.h"

namespace fleetmark::engine {
namespace {

// A carrier that is one executor with Start(threads, options), size() and Stop():
// ThreadPool, WorkStealingArena, ElasticPool (size = its cap), FiberRunner, AsioRunner.
template <typename Runner>
class RunnerCarrier final : public StrategyCarrier {
 public:
  explicit RunnerCarrier(const StrategyTraits& traits) : StrategyCarrier(traits) {}
  ~RunnerCarrier() override { Stop(); }

  absl::Status Start(int threads, const ThreadOptions& options) {
    absl::Status s = runner_.Start(threads, options);
    if (s.ok()) threads_ = threads;
    return s;
  }
  int threads() const override { return threads_; }
  Executor& executor() override { return runner_; }
  AsioRunner* asio() override {
    if constexpr (std::is_same_v<Runner, AsioRunner>) return &runner_;
    return nullptr;
  }
  FiberRunner* fibres() override {
    if constexpr (std::is_same_v<Runner, FiberRunner>) return &runner_;
    return nullptr;
  }
  void Stop() override { runner_.Stop(); }

 private:
  Runner runner_;
  int threads_ = 0;
};

// kLimited: a pool of max(CPUs, cap) threads under a Limiter of `cap` tasks in flight.
class LimitedCarrier final : public StrategyCarrier {
 public:
  explicit LimitedCarrier(const StrategyTraits& traits) : StrategyCarrier(traits) {}
  ~LimitedCarrier() override { Stop(); }

  absl::Status Start(int cap, const ThreadOptions& options) {
    absl::Status s = pool_.Start(std::max(LogicalCpuCount(), cap), options);
    if (s.ok()) limiter_ = std::make_unique<Limiter>(&pool_, cap);
    return s;
  }
  int threads() const override { return pool_.size(); }
  Executor& executor() override { return *limiter_; }
  void Stop() override { pool_.Stop(); }

 private:
  ThreadPool pool_;
  std::unique_ptr<Limiter> limiter_;
};

template <typename Carrier>
absl::StatusOr<std::unique_ptr<StrategyCarrier>> Started(const StrategyTraits& traits, int threads,
                                                         const ThreadOptions& options) {
  auto carrier = std::make_unique<Carrier>(traits);
  if (absl::Status s = carrier->Start(threads, options); !s.ok()) return s;
  return carrier;
}

}  // namespace

bool HasExecutor(Carrier carrier) {
  return carrier != Carrier::kCaller && carrier != Carrier::kThreadPerTask && carrier != Carrier::kAsync &&
         carrier != Carrier::kOpenMp && carrier != Carrier::kStdPar;
}

absl::StatusOr<std::unique_ptr<StrategyCarrier>> StartCarrier(const StrategyTraits& traits, int threads,
                                                              const ThreadOptions& options) {
  if (traits.ignores_threads && traits.fixed_threads > 0) threads = traits.fixed_threads;
  switch (traits.carrier) {
    case Carrier::kPool:
      return Started<RunnerCarrier<ThreadPool>>(traits, threads, options);
    case Carrier::kWorkStealing:
      return Started<RunnerCarrier<WorkStealingArena>>(traits, threads, options);
    case Carrier::kLimited:
      return Started<LimitedCarrier>(traits, threads, options);
    case Carrier::kElastic:
      return Started<RunnerCarrier<ElasticPool>>(traits, threads, options);
    case Carrier::kFiber:
      return Started<RunnerCarrier<FiberRunner>>(traits, threads, options);
    case Carrier::kAsioCoroutine:
    case Carrier::kAsioCallback:
      return Started<RunnerCarrier<AsioRunner>>(traits, threads, options);
    case Carrier::kCaller:
    case Carrier::kThreadPerTask:
    case Carrier::kAsync:
      break;
    case Carrier::kOpenMp:
    case Carrier::kStdPar:
      return absl::UnimplementedError(
          absl::StrCat(std::string(traits.name),
                       " has no executor to submit closures to: it runs a whole batch as one parallel "
                       "construct (OpenMP region or std::for_each), so only the batch scenario runs it"));
  }
  return absl::UnimplementedError(absl::StrCat(std::string(traits.name),
                                               " has no executor of its own: its tasks run on the caller or on one new "
                                               "thread each"));
}

}  // namespace fleetmark::engine
