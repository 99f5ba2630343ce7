// event_loop: plain callbacks on an AsioRunner (one io_context per thread, tasks spread
// round-robin) — the counterpart of an Rx/Netty event loop. Suspending wait: an
// asio::steady_timer whose async_wait callback ends the task; blocking wait: sleep in
// the handler, which stalls that loop.
#include <latch>
#include <memory>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include "engine/strategies/adapters.h"
#include "engine/strategies/executors/asio_runner.h"
#include "engine/strategies/runner_strategy.h"

namespace fleetmark::engine {
namespace {

class EventLoopStrategy final : public RunnerStrategy<AsioRunner> {
 public:
  EventLoopStrategy() : RunnerStrategy("event_loop", "fm-loop", "") {}

 protected:
  absl::Status DoRunBatch(const Workload& workload, int n, IoMode mode) override {
    std::latch done(n);
    for (int i = 0; i < n; ++i) {
      boost::asio::io_context& ctx = runner().Next();
      boost::asio::post(ctx, [this, &ctx, &workload, &done, i, mode] {
        BeginTask(i);
        ComputeTask(workload, i);
        const absl::Duration wait = workload.Wait(i);
        if (wait > absl::ZeroDuration() && mode == IoMode::kSuspending) {
          auto timer = std::make_shared<boost::asio::steady_timer>(ctx, absl::ToChronoNanoseconds(wait));
          timer->async_wait([this, timer, &done, i](const boost::system::error_code&) {
            EndTask(i);
            done.count_down();
          });
          return;
        }
        BlockingWait(wait);
        EndTask(i);
        done.count_down();
      });
    }
    done.wait();
    return absl::OkStatus();
  }
};

}  // namespace

std::unique_ptr<Strategy> NewEventLoopStrategy() { return std::make_unique<EventLoopStrategy>(); }

}  // namespace fleetmark::engine
