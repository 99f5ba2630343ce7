// What a result says about the other work it was measured under, in the terms of the
// verdict's Contention bound (verdict.h): the one place a CaseResult becomes a
// Contender's contention fields, for the runner's racing, the strategy map, `compare`
// and the web view alike.
//
//   Contender c{.name = ..., .rounds = ..., .process_medians_ns = ...};
//   SetContention(result, c);
//
// Pure functions; thread-safe.
#pragma once

#include "engine/measure/verdict.h"
#include "fleetmark/v1/result.pb.h"

namespace fleetmark::engine {

// The episodes per repetition in which a thread of the case can have waited for a CPU
// (verdict.h, Contention): every such stretch begins with a context switch of the
// thread — voluntary (it slept and is woken: a wake-up) or involuntary (it was
// preempted) — or with the thread's start (counted as a preemption: it waits its turn).
// -1 each when the counters were not measured (no repetition counted) or are corrupt.
struct WaitEpisodes {
  double wakeups = -1;      // counters.voluntary_context_switches / repetitions
  double preemptions = -1;  // counters.involuntary_context_switches / repetitions + threads_used
};
WaitEpisodes WaitEpisodesPerRepetition(const v1::CaseResult& result);

// Sets `contender`'s contended, other_cpu_share, wake-ups and preemptions per
// repetition and their delays from `result`.
void SetContention(const v1::CaseResult& result, Contender& contender);

}  // namespace fleetmark::engine
