// ElasticPool: a cached pool (Java's newCachedThreadPool capped, Rx io,
// Dispatchers.IO). A submitted task goes to an idle thread if there is one, else a new
// thread is created while fewer than `max_threads` exist, else it waits in a FIFO
// queue for the next free thread. Threads are created on demand and, once created,
// stay (blocked on a condition variable, never spinning) until Stop, so a warmed-up
// pool reuses them like the JVM pools do within their keep-alive time.
//
//   ElasticPool pool;
//   FLEETMARK_RETURN_IF_ERROR(pool.Start(64, {}));
//   FLEETMARK_RETURN_IF_ERROR(pool.Submit([] { BlockingCall(); }));
//   pool.Stop();
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <vector>

#include "absl/status/status.h"
#include "engine/strategies/executors/executor.h"
#include "engine/strategies/executors/os_thread.h"

namespace fleetmark::engine {

class ElasticPool final : public Executor {
 public:
  ElasticPool() = default;
  ElasticPool(const ElasticPool&) = delete;
  ElasticPool& operator=(const ElasticPool&) = delete;
  ~ElasticPool() override;  // calls Stop()

  // Makes the pool accept tasks; creates no thread yet. `max_threads` in
  // 1..kMaxThreads (limits.h). Errors: InvalidArgument, FailedPrecondition (started).
  absl::Status Start(int max_threads, const ThreadOptions& options = {});

  // Runs `fn` on an idle thread, a new thread (below the cap) or queues it. Returns
  // ResourceExhausted only if a new thread was needed, could not be created and the
  // pool has no thread at all to queue on (otherwise the task is queued). Thread-safe.
  absl::Status Submit(std::function<void()> fn) override;

  // Runs what is queued, then joins every thread. Idempotent; not from a pool thread.
  void Stop();

  // Threads created so far (never decreases before Stop). Thread-safe.
  int threads_created() const;

  // Threads waiting for work now (a snapshot). Thread-safe.
  int idle_threads() const;

 private:
  void WorkerLoop();

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;  // guarded by mu_
  int max_threads_ = 0;
  int idle_ = 0;          // threads waiting for work; guarded by mu_
  bool running_ = false;  // guarded by mu_
  ThreadOptions options_;
  std::vector<OsThread> threads_;  // guarded by mu_
};

}  // namespace fleetmark::engine
