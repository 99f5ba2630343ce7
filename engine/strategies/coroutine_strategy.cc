// coroutine: C++20 coroutines (boost::asio::awaitable + co_spawn) on an AsioRunner
// (one io_context per thread, tasks spread round-robin) — the counterpart of Kotlin
// coroutines. Suspending wait: co_await on an asio::steady_timer, which frees the
// thread; blocking wait: sleep on the carrier thread.
#include <latch>
#include <utility>  // before Boost: 1.74's awaitable.hpp uses std::exchange unincluded

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "engine/strategies/adapters.h"
#include "engine/strategies/executors/asio_runner.h"
#include "engine/strategies/runner_strategy.h"

namespace fleetmark::engine {
namespace {

class CoroutineStrategy final : public RunnerStrategy<AsioRunner> {
 public:
  CoroutineStrategy() : RunnerStrategy("coroutine", "fm-coro", "") {}

 protected:
  absl::Status DoRunBatch(const Workload& workload, int n, IoMode mode) override {
    std::latch done(n);
    for (int i = 0; i < n; ++i) {
      boost::asio::co_spawn(runner().Next(), Task(workload, i, mode, done), boost::asio::detached);
    }
    done.wait();
    return absl::OkStatus();
  }

 private:
  // The references outlive the coroutine: DoRunBatch waits for `done`.
  boost::asio::awaitable<void> Task(const Workload& workload, int i, IoMode mode, std::latch& done) {
    BeginTask(i);
    ComputeTask(workload, i);
    const absl::Duration wait = workload.Wait(i);
    if (wait > absl::ZeroDuration()) {
      if (mode == IoMode::kSuspending) {
        boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor, absl::ToChronoNanoseconds(wait));
        boost::system::error_code ec;
        co_await timer.async_wait(boost::asio::redirect_error(boost::asio::use_awaitable, ec));
      } else {
        BlockingWait(wait);
      }
    }
    EndTask(i);
    done.count_down();
  }
};

}  // namespace

std::unique_ptr<Strategy> NewCoroutineStrategy() { return std::make_unique<CoroutineStrategy>(); }

}  // namespace fleetmark::engine
