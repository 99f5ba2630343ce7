// Scheduling delay: how long one thread of this device waits for a CPU, per episode,
// while other work runs — measured right after a contended process (contention.h) so
// the verdict can bound what that work added to the process's times
// (engine/measure/contention_evidence.h, engine/measure/verdict.h, Contention).
//
//   SchedulingDelay d = MeasureSchedulingDelay();   // ~0.2 s on a quiet machine
//   result.set_wakeup_delay_ns(d.wakeup_bound_ns);
//
// Method: the two probes of latency benchmarks. Wake-ups as cyclictest measures them
// (rt-tests; Rostedt & Hart, "Internals of the RT Patch", Ottawa Linux Symposium 2007):
// a thread sleeps a fixed interval again and again and each overshoot of the wake-up
// over the requested time is the wait for a CPU after a wake-up (timer slack included:
// it is part of a wake-up's cost uncontended too, so it only makes the bound looser).
// Preemptions as a spinning thread sees them (the "hwlat"/"jitter" probes: a loop that
// reads the clock and records every gap between consecutive reads above kGapNs): each
// gap is one stretch the thread was off the CPU while it wanted it. The two differ
// under load by an order of magnitude: a woken sleeper is placed ahead (its lag), a
// preempted thread waits its turn behind every runnable task (with two busy loops and
// a build on 2 CPUs: ~0.6 ms per wake-up, ~20 ms per preemption). Each kind is
// summarised by the upper one-sided 95 % bound of its mean, mean + t(0.95, n-1)·s/√n
// (Student; the expected total of n episodes is n times the mean), so the sum over a
// process's episodes is bounded in expectation, not per episode.
//
// Thread-safe (no shared state); MeasureSchedulingDelay blocks its caller.
#pragma once

#include <vector>

#include "absl/time/time.h"

namespace fleetmark::engine {

// A clock gap a spinning thread counts as a preemption, ns: far above a clock read
// (~20-50 ns) and a short interrupt, below any scheduler's time slice (>= 0.1 ms).
inline constexpr double kGapNs = 20'000;

struct SchedulingDelay {
  int wakeups = 0;                 // sleeps measured
  double wakeup_bound_ns = 0;      // upper 95 % bound of the mean wake-up overshoot, ns
  int preemptions = 0;             // gaps above kGapNs the spinner saw
  double preemption_bound_ns = 0;  // upper 95 % bound of the mean gap, ns; 0 when none
};

// The upper one-sided 95 % bound of the mean of `values`: mean + t(0.95, n-1)·s/√n;
// the one value for n = 1, 0 for none. Pure.
double UpperMeanBound(const std::vector<double>& values);

// Spins for `spin` (recording gaps above kGapNs), then sleeps `sleep` `wakeups` times
// (recording each overshoot). Durations must be positive and wakeups >= 1 (else the
// defaults are used).
SchedulingDelay MeasureSchedulingDelay(absl::Duration spin = absl::Milliseconds(100), int wakeups = 100,
                                       absl::Duration sleep = absl::Milliseconds(1));

}  // namespace fleetmark::engine
