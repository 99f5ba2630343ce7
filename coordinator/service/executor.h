// The coordinator's own executor: a fixed pool of threads running posted tasks, plus
// delayed tasks. gRPC reactions never block; they post database work here.
//
//   Executor executor(4);
//   executor.Post([] { ... });
//   executor.PostAfter(absl::Milliseconds(200), [] { ... });   // retry later
//   executor.Shutdown();   // runs no more tasks, joins threads (pending ones dropped)
//
// Delays are steady time of the executor's clock (the coordinator's; SystemClock() by
// default): on a FakeClock a delayed task runs once the test advances the clock past
// its due time (within about a millisecond of real time, Clock::AwaitWithDeadline).
//
// Thread-safety: Post/PostAfter/Shutdown may be called from any thread, including
// from tasks. Tasks run in FIFO order of their due time, possibly concurrently.
#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "engine/common/clock.h"

namespace fleetmark::service {

class Executor {
 public:
  // `clock` is not owned and must outlive the executor.
  explicit Executor(int threads, const Clock& clock = SystemClock());
  ~Executor();  // Shutdown()
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Runs `task` as soon as a thread is free. Dropped after Shutdown().
  void Post(std::function<void()> task);
  // Runs `task` no earlier than `delay` from now (the clock's SteadyNow()).
  void PostAfter(absl::Duration delay, std::function<void()> task);
  // Stops the threads after their current task; pending tasks are destroyed unrun.
  // Must not be called from an executor thread. Idempotent.
  void Shutdown();

  // Tasks waiting (due or delayed), for diagnostics.
  size_t pending() const;

 private:
  struct Item {
    absl::Time due;
    uint64_t seq;
    std::function<void()> task;
    bool operator>(const Item& o) const { return due != o.due ? due > o.due : seq > o.seq; }
  };
  void Loop();

  const Clock& clock_;
  mutable absl::Mutex mu_;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> queue_ ABSL_GUARDED_BY(mu_);
  uint64_t seq_ ABSL_GUARDED_BY(mu_) = 0;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;  // set by the constructor, joined by Shutdown
};

}  // namespace fleetmark::service
