#include "engine/strategies/executors/work_stealing_arena.h"

#include <cstddef>
#include <utility>

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>

#include "engine/strategies/executors/run_guarded.h"
#include "engine/strategies/executors/worker_threads.h"

namespace fleetmark::engine {

// Members die in reverse order: the arena before the global controls.
struct WorkStealingArena::State {
  std::unique_ptr<tbb::global_control> parallelism;
  std::unique_ptr<tbb::global_control> stack;
  std::unique_ptr<tbb::task_arena> arena;
};

WorkStealingArena::WorkStealingArena() = default;
WorkStealingArena::~WorkStealingArena() { Stop(); }

absl::Status WorkStealingArena::Start(int threads, const ThreadOptions& options) {
  if (state_) return absl::FailedPreconditionError("work-stealing arena: already started");
  if (absl::Status s = ValidateExecutorStart(threads, options); !s.ok()) return s;
  auto state = std::make_unique<State>();
  state->parallelism = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                                             static_cast<size_t>(threads) + 1);
  if (options.stack_kib != 0) {
    state->stack = std::make_unique<tbb::global_control>(tbb::global_control::thread_stack_size,
                                                         static_cast<size_t>(options.stack_kib) * 1024);
  }
  state->arena = std::make_unique<tbb::task_arena>(threads, 0);
  state->arena->initialize();
  state_ = std::move(state);
  return absl::OkStatus();
}

absl::Status WorkStealingArena::Submit(std::function<void()> fn) {
  if (!state_) return absl::FailedPreconditionError("work-stealing arena: not running");
  state_->arena->enqueue([fn = std::move(fn)] { RunGuarded(fn, "a work-stealing arena task"); });
  return absl::OkStatus();
}

void WorkStealingArena::Stop() {
  if (!state_) return;
  state_->arena.reset();
  state_.reset();
}

int WorkStealingArena::size() const { return state_ ? state_->arena->max_concurrency() : 0; }

}  // namespace fleetmark::engine
