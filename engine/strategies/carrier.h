// The executor factory: what a scenario (memory, fanout, load) runs a strategy's tasks
// on. The batch scenario asks MakeStrategy (strategy.h) for a whole Strategy; the
// other scenarios drive tasks their own way (held waits, request fan-out, HTTP
// sessions) and ask StartCarrier for the strategy's executor, built from its registry
// entry (registry.h), so no scenario builds an executor by strategy name.
//
//   const StrategyTraits* traits = FindStrategy(spec.strategy().name());
//   FLEETMARK_ASSIGN_OR_RETURN(std::unique_ptr<StrategyCarrier> carrier,
//                              StartCarrier(*traits, 4, {.stack_kib = 256}));
//   FLEETMARK_RETURN_IF_ERROR(carrier->executor().Submit([] { Work(); }));
//   if (AsioRunner* asio = carrier->asio()) co_spawn(asio->Next(), ...);
//   carrier->Stop();
#pragma once

#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/strategies/executors/executor.h"
#include "engine/strategies/registry.h"

namespace fleetmark::engine {

class AsioRunner;
class FiberRunner;

// A started executor of one strategy. Owns its threads; Stop (or the destructor)
// joins them. Not thread-safe itself; executor() is thread-safe as the Executor says.
class StrategyCarrier {
 public:
  virtual ~StrategyCarrier() = default;
  const StrategyTraits& traits() const { return *traits_; }
  // Threads (or arena slots) it runs, as started.
  virtual int threads() const = 0;
  // Runs closures: the pool, arena, limiter, elastic pool, one fibre per closure, or
  // a post to the next io_context. Valid until Stop.
  virtual Executor& executor() = 0;
  // The runner of the Asio carriers (kAsioCoroutine, kAsioCallback), else nullptr.
  virtual AsioRunner* asio() { return nullptr; }
  // The runner of kFiber, else nullptr.
  virtual FiberRunner* fibres() { return nullptr; }
  // Stops the executor as its own Stop says (pools run what is queued; the Asio
  // runner drops handlers not yet run; the arena does not wait). Idempotent.
  virtual void Stop() = 0;

 protected:
  explicit StrategyCarrier(const StrategyTraits& traits) : traits_(&traits) {}

 private:
  const StrategyTraits* traits_;
};

// True if StartCarrier builds an executor for `carrier`: every carrier but kCaller,
// kThreadPerTask and kAsync, whose tasks run on the caller or on threads of their own
// (the scenarios start those threads with StartThread), and kOpenMp and kStdPar, which
// run a whole batch as one parallel construct (batch scenario only). Thread-safe.
bool HasExecutor(Carrier carrier);

// Starts the executor of `traits` (an entry of kStrategies) with `threads` threads:
// the pool size (kPool; a strategy with fixed_threads uses those), arena slots,
// limiter cap (kLimited; its pool has max(CPUs, threads) threads), elastic cap, fibre
// carriers or io_contexts. `threads` in 1..kMaxThreads; `options` as the executor's
// Start takes them. Errors: Unimplemented when !HasExecutor(traits.carrier), naming
// the strategy; the executor's Start errors (InvalidArgument, ResourceExhausted,
// FailedPrecondition for a second work-stealing fibre group in this process).
// Thread-safe.
absl::StatusOr<std::unique_ptr<StrategyCarrier>> StartCarrier(const StrategyTraits& traits, int threads,
                                                              const ThreadOptions& options = {});

}  // namespace fleetmark::engine
