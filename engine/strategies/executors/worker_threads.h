// Executor start-up shared by the executors: ValidateExecutorStart (the argument
// checks of every executor's Start) and StartWorkerThreads (the fixed-size executors'
// N named OS threads, each running the on_thread_start hook, then its loop).
#pragma once

#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "engine/strategies/executors/executor.h"
#include "engine/strategies/executors/os_thread.h"

namespace fleetmark::engine {

// OK if 1 <= threads <= kMaxThreads (limits.h) and options.stack_kib is valid
// (ValidateStackKib); else InvalidArgument naming the field, the value and the range.
absl::Status ValidateExecutorStart(int threads, const ThreadOptions& options);

// Starts `threads` (>= 1, already checked by ValidateExecutorStart) threads with
// options.stack_kib and names "<options.name_prefix>-<k>", appending them to `started`.
// Thread k runs options.on_thread_start (if set; an exception is logged, RunGuarded),
// then `body(k)`. Returns once every thread has run its hook. `body` is copied into
// each thread and must stay valid (with what it references) until the caller joins them.
// Errors: StartThread's (ResourceExhausted when the system refuses a thread). On error
// the threads already started are in `started` and already running `body`: the caller
// must make `body` return and join them (its Stop).
absl::Status StartWorkerThreads(int threads, const ThreadOptions& options, const std::function<void(int k)>& body,
                                std::vector<OsThread>& started);

}  // namespace fleetmark::engine
