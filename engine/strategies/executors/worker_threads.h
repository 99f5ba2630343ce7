// StartWorkerThreads: the thread start-up the fixed-size executors (ThreadPool,
// AsioRunner) share — N named OS threads that each run the on_thread_start hook, then
// their loop, with the caller waiting until every hook has run.
#pragma once

#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "engine/strategies/executors/executor.h"
#include "engine/strategies/executors/os_thread.h"

namespace fleetmark::engine {

// Starts `threads` (>= 1, already range-checked by the caller) threads with
// options.stack_kib and names "<options.name_prefix>-<k>", appending them to `started`.
// Thread k runs options.on_thread_start (if set; an exception is logged, RunGuarded),
// then `body(k)`. Returns once every thread has run its hook. `body` is copied into
// each thread and must stay valid (with what it references) until the caller joins them.
// Errors: StartThread's (ResourceExhausted when the system refuses a thread). On error
// the threads already started are in `started` and already running `body`: the caller
// must make `body` return and join them (its Stop).
absl::Status StartWorkerThreads(int threads, const ThreadOptions& options,
                                const std::function<void(int k)>& body,
                                std::vector<OsThread>& started);

}  // namespace fleetmark::engine
