#include "engine/strategies/executors/worker_threads.h"

#include <latch>
#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/strategies/executors/run_guarded.h"
#include "engine/strategies/executors/thread_pool.h"

namespace fleetmark::engine {

absl::Status ValidateExecutorStart(int threads, const ThreadOptions& options) {
  if (threads < 1 || threads > kMaxThreads) {
    return absl::InvalidArgumentError(absl::StrCat("threads: 1 <= threads <= ", kMaxThreads, ", got ", threads));
  }
  return ValidateStackKib(options.stack_kib);
}

absl::Status StartWorkerThreads(int threads, const ThreadOptions& options, const std::function<void(int k)>& body,
                                std::vector<OsThread>& started) {
  std::latch ready(threads);
  started.reserve(started.size() + threads);
  for (int k = 0; k < threads; ++k) {
    auto thread = StartThread(
        options.stack_kib,
        [&ready, body, k, hook = options.on_thread_start] {
          if (hook) RunGuarded(hook, "on_thread_start");
          ready.count_down();
          body(k);
        },
        absl::StrCat(options.name_prefix, "-", k));
    if (!thread.ok()) {
      // Release the wait for the threads never created, then wait for the hooks of
      // the ones that were.
      ready.count_down(threads - k);
      ready.wait();
      return thread.status();
    }
    started.push_back(*std::move(thread));
  }
  ready.wait();
  return absl::OkStatus();
}

}  // namespace fleetmark::engine
