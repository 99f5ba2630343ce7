// FiberRunner: Boost.Fiber fibres on N OS threads.
//
// N >= 2 uses boost::fibers::algo::work_stealing(N, /*suspend=*/true): fibres are
// stolen between threads, and idle threads sleep on a condition variable instead of
// spinning at 100% CPU (suspend = false spins). N == 1 uses algo::round_robin, because
// 1.74's work_stealing picks a victim other than itself in an endless loop when it has
// only one thread.
//
// Pitfall (Boost 1.74): work_stealing keeps process-wide static state — one thread
// group per process, whose N threads all wait in its constructor until the last one
// arrives, and which cannot be rebuilt after they exit. So a process can Start a
// FiberRunner with N >= 2 only once; a second Start returns FailedPrecondition. Run
// each fibre case in its own process.
//
//   FiberRunner runner;
//   FLEETMARK_RETURN_IF_ERROR(runner.Start(4, {.stack_kib = 64}));
//   FLEETMARK_RETURN_IF_ERROR(runner.Launch(100, [](int i) { Task(i); }));
//   ...  // wait for the fibres by your own means (e.g. a std::latch they count down)
//   runner.Stop();
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "engine/strategies/executors/executor.h"
#include "engine/strategies/executors/os_thread.h"

namespace fleetmark::engine {

class FiberRunner final : public Executor {
 public:
  FiberRunner();
  FiberRunner(const FiberRunner&) = delete;
  FiberRunner& operator=(const FiberRunner&) = delete;
  ~FiberRunner() override;  // calls Stop()

  // Starts `threads` (1..kMaxThreads) OS threads with their fibre schedulers; returns once
  // every thread has run `options.on_thread_start` and joined the scheduler group.
  // `options.stack_kib` is the stack of each fibre (0 = Boost's default, 128 KiB; the
  // OS threads keep the system default). Errors: InvalidArgument; FailedPrecondition
  // (already started, or a work-stealing group already ran in this process);
  // ResourceExhausted (thread creation failed; threads already created are released).
  absl::Status Start(int threads, const ThreadOptions& options = {});

  // Launches `count` detached fibres running body(0) .. body(count - 1) inside the
  // scheduler group (created on thread 0, then stolen by idle threads). Returns once
  // the request is queued, not when the fibres finish. `body` may block only by
  // fibre means (boost::this_fiber::sleep_for, fibre mutexes); a blocking system call
  // blocks its carrier thread. Errors: FailedPrecondition if not running. Thread-safe,
  // callable from any thread (including plain non-fibre threads).
  absl::Status Launch(int count, std::function<void(int)> body);

  // Executor: one fibre running `fn`.
  absl::Status Submit(std::function<void()> fn) override;

  // Waits for launched fibres to finish, then ends the scheduler group and joins the
  // threads. Idempotent; not from a fibre of this runner.
  void Stop();

  int size() const { return threads_; }

 private:
  struct Shared;  // the fibre-side state (channel, stop flag), defined in the .cc
  std::shared_ptr<Shared> shared_;
  std::vector<OsThread> os_threads_;
  int threads_ = 0;
  std::atomic<bool> running_{false};
};

}  // namespace fleetmark::engine
