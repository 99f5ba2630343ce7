// The fanout scenario (S4): R concurrent requests, each calling a dependency D times.
//
// Every call waits its delay (fixed, or uniform in [0, delay] from a seeded generator:
// call j of request r gets the same delay in every run) and fails as a timeout if the
// delay exceeds the timeout (it then waits the timeout only). A request succeeds when
// all its calls do, times out when any call timed out, and fails when a call could not
// be run at all (thread or task creation refused). Latency of a request = from the
// moment all R are issued to its last call's end.
//
// How calls are carried, per strategy (blocking = the carrier OS thread sleeps;
// suspending = the strategy's own timer):
//   direct           each request on its own OS thread, calls one after another
//   fixed_pool       request threads submit calls to a pool: threads 0 = a pool of D
//                    threads per request (as S4 did), threads k = one shared pool of k
//   work_stealing    request threads submit to one oneTBB task_arena of k workers
//   thread_per_task  request threads start one OS thread per call
//   fiber            requests and calls are fibres on k threads (Boost.Fiber)
//   coroutine        requests and calls are C++20 coroutines on k Asio io_contexts
//   event_loop       requests and calls are callbacks on k Asio io_contexts
// Thread-based strategies support blocking waits only; fiber/coroutine/event_loop both.
//
// The case always runs in a child process (RunFanoutCase spawns it), so a case that
// exhausts threads or memory costs only the child.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engine/scenarios/params.h"
#include "engine/scenarios/scenario.h"
#include "engine/strategies/registry.h"
#include "fleetmark/v1/result.pb.h"

namespace fleetmark::engine {

// Fills `result` for `spec` (scenario "fanout"). InvalidArgument only for a bad spec;
// everything else is the result's status.
absl::Status RunFanoutCase(const v1::CaseSpec& spec, const ScenarioContext& ctx, v1::CaseResult* result);

// Child handler for kFanoutChildKind: request = serialized CaseSpec, response =
// serialized CaseResult (status, message, fanout, counters).
absl::StatusOr<std::string> FanoutChild(std::string_view request);

// Runs the case in this process and fills `result`. Used by FanoutChild; callable
// directly by tests that accept the threads it creates. Thread-safe w.r.t. other
// cases except that a fiber case with k >= 2 can run once per process (FiberRunner).
absl::Status RunFanoutInProcess(const v1::CaseSpec& spec, v1::CaseResult* result);

// The delay of call `call` of request `request`: config.delay when fixed, otherwise
// uniform in [0, config.delay] (1 µs steps) from SplitMix64 (Steele, Lea & Flood,
// "Fast splittable pseudorandom number generators", OOPSLA 2014) seeded with
// (seed, request, call). Pure.
absl::Duration FanoutCallDelay(const FanoutConfig& config, uint32_t request, uint32_t call);

// True for the strategies whose requests run on OS threads (blocking waits only):
// the caller, pool (sized by threads), work-stealing and thread-per-task carriers.
bool IsFanoutThreadCarried(const StrategyTraits& strategy);

}  // namespace fleetmark::engine
