// ThreadPool: a fixed number of OS threads sharing one FIFO queue (Java's
// newFixedThreadPool). Idle workers block on a condition variable (never spin).
//
//   ThreadPool pool;
//   FLEETMARK_RETURN_IF_ERROR(pool.Start(4, {.stack_kib = 256}));
//   FLEETMARK_RETURN_IF_ERROR(pool.Submit([] { Work(); }));
//   pool.Stop();  // runs what is queued, then joins every worker
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <vector>

#include "absl/status/status.h"
#include "engine/strategies/executors/executor.h"
#include "engine/strategies/executors/os_thread.h"
#include "engine/strategies/limits.h"

namespace fleetmark::engine {

class ThreadPool final : public Executor {
 public:
  ThreadPool() = default;
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  ~ThreadPool() override;  // calls Stop()

  // Creates `threads` workers (1..kMaxThreads, limits.h) and waits until each has run
  // `options.on_thread_start`. Errors: InvalidArgument (threads or stack out of range),
  // FailedPrecondition (already started), ResourceExhausted (a thread could not be
  // created; the ones already created are joined and the pool stays stopped).
  absl::Status Start(int threads, const ThreadOptions& options = {});

  // Appends `fn` to the shared FIFO queue. Thread-safe, also from inside a task.
  absl::Status Submit(std::function<void()> fn) override;

  // Lets the workers finish every queued task, then joins them. Idempotent; must not
  // be called from one of the pool's own threads.
  void Stop();

  int size() const { return static_cast<int>(threads_.size()); }

 private:
  void WorkerLoop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;  // guarded by mu_
  bool running_ = false;                     // guarded by mu_
  std::vector<OsThread> threads_;            // owned by the Start/Stop caller
};

}  // namespace fleetmark::engine
