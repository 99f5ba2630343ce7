// Executor: the one-method interface the pools share, so decorators (Limiter) and
// scenarios can run closures on any pool without knowing which one it is.
#pragma once

#include <functional>
#include <string>

#include "absl/status/status.h"

namespace fleetmark::engine {

class Executor {
 public:
  virtual ~Executor() = default;
  // Queues `fn` to run once on one of the executor's threads and returns without
  // waiting. Errors: FailedPrecondition when the executor is not running (not started
  // or stopped); ResourceExhausted when it needed a new thread and could not create
  // one and has none to queue on. On error `fn` is not run. An exception escaping
  // `fn` is logged to stderr (RunGuarded) and the thread goes on serving. Thread-safe.
  virtual absl::Status Submit(std::function<void()> fn) = 0;
};

// What every thread-creating executor accepts.
struct ThreadOptions {
  int stack_kib = 0;  // 0 = system default; see os_thread.h for the range
  // Runs first on every thread the executor creates, before any task. May be empty.
  std::function<void()> on_thread_start = {};
  std::string name_prefix = "fm-worker";  // thread names: "<prefix>-<k>"
};

}  // namespace fleetmark::engine
