// WorkStealingArena: an Executor over a oneTBB task_arena of N worker slots, none
// reserved for external threads, so closures submitted from any thread are run by
// the arena's workers with work stealing (the closure-submitting counterpart of the
// work_stealing strategy, for the scenarios).
//
// oneTBB caps every arena by its process-wide worker limit (default CPUs - 1 workers),
// so the arena holds a global_control raising it to N + 1 while it lives (this lifts
// the cap for other arenas of the process meanwhile), and one setting the workers'
// stack size when `stack_kib` != 0.
//
//   WorkStealingArena arena;
//   FLEETMARK_RETURN_IF_ERROR(arena.Start(4, {}));
//   FLEETMARK_RETURN_IF_ERROR(arena.Submit([] { Work(); }));
//   ...  // wait for the tasks by your own means (e.g. a std::latch)
//   arena.Stop();
#pragma once

#include <memory>

#include "absl/status/status.h"
#include "engine/strategies/executors/executor.h"

namespace fleetmark::engine {

class WorkStealingArena final : public Executor {
 public:
  WorkStealingArena();
  WorkStealingArena(const WorkStealingArena&) = delete;
  WorkStealingArena& operator=(const WorkStealingArena&) = delete;
  ~WorkStealingArena() override;  // calls Stop()

  // Creates the arena of `threads` slots (1..kMaxThreads) with workers of
  // options.stack_kib (0 = TBB's default). on_thread_start and name_prefix are not
  // applied (TBB owns its workers). Errors: InvalidArgument, FailedPrecondition (started).
  absl::Status Start(int threads, const ThreadOptions& options = {});

  // Enqueues `fn` into the arena. FailedPrecondition if not running. Thread-safe.
  absl::Status Submit(std::function<void()> fn) override;

  // Destroys the arena, then drops the global controls. Does not wait for submitted
  // tasks (wait for them first). Idempotent; not from an arena worker.
  void Stop();

  // The arena's concurrency (its slots), 0 when not running.
  int size() const;

 private:
  struct State;  // the TBB objects, defined in the .cc
  std::unique_ptr<State> state_;
};

}  // namespace fleetmark::engine
