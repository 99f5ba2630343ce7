// Limiter: caps how many of its tasks run at once on an underlying Executor, like
// Kotlin's CoroutineDispatcher.limitedParallelism(n). Tasks beyond the cap wait in the
// limiter's own FIFO queue and occupy no thread of the underlying pool: the limiter
// keeps at most `max_in_flight` "runner" closures submitted to the pool, each of which
// drains the queue and returns its thread to the pool when the queue is empty.
//
//   ThreadPool pool;  pool.Start(8);
//   Limiter limited(&pool, 2);   // at most 2 of these tasks at once
//   limited.Submit([] { Work(); });
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>

#include "absl/status/status.h"
#include "engine/strategies/executors/executor.h"

namespace fleetmark::engine {

class Limiter final : public Executor {
 public:
  // `underlying` must outlive the limiter and every task submitted through it.
  // `max_in_flight` >= 1 (values below 1 are treated as 1).
  Limiter(Executor* underlying, int max_in_flight);
  Limiter(const Limiter&) = delete;
  Limiter& operator=(const Limiter&) = delete;

  // Queues `fn`; starts a runner on the underlying executor if fewer than
  // `max_in_flight` are active. Errors: those of the underlying Submit when no runner
  // is active to take `fn` (then `fn` is removed and never run); if other runners are
  // active the task stays queued for them and OK is returned. Thread-safe.
  absl::Status Submit(std::function<void()> fn) override;

  int max_in_flight() const { return max_in_flight_; }

 private:
  void RunnerLoop();

  Executor* const underlying_;
  const int max_in_flight_;
  std::mutex mu_;
  struct Entry {
    uint64_t id;
    std::function<void()> fn;
  };
  std::deque<Entry> queue_;  // guarded by mu_
  uint64_t next_id_ = 0;     // guarded by mu_
  int runners_ = 0;          // active runner closures; guarded by mu_
};

}  // namespace fleetmark::engine
