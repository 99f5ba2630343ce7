// Steady time and timed waits that a wall-clock step cannot stall.
//
// Abseil's timed waits (Mutex::AwaitWithTimeout/AwaitWithDeadline, CondVar's) sleep
// until an absolute CLOCK_REALTIME instant (FUTEX_CLOCK_REALTIME): when the wall clock
// is set back by an hour, a 50 ms wait in progress lasts an hour and ten seconds of
// 50 ms waits stall until the clock is restored (issue 32: no commits, no heartbeats
// while the clock was back). Durations, deadlines and timeouts therefore use
// SteadyNow() (CLOCK_MONOTONIC), and timed waits AwaitSteady, which waits untimed on
// the mutex and is woken by one process-wide timer thread sleeping on the monotonic
// clock (std::condition_variable::wait_until with std::chrono::steady_clock).
//
//   const absl::Time deadline = SteadyNow() + absl::Seconds(5);   // a steady deadline
//   absl::MutexLock lock(&mu);
//   AwaitSteady(mu, absl::Condition(&done), deadline);            // true if done
//
// Thread-safety: both functions are safe from any thread.
#pragma once

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace fleetmark {

// The monotonic clock (CLOCK_MONOTONIC) as an absl::Time on an arbitrary epoch: never
// steps, unaffected by setting the wall clock. Only differences between SteadyNow()
// readings, and deadlines built from them, mean anything; never show it or mix it with
// absl::Now().
absl::Time SteadyNow();

// Waits on `mu` (held by the caller; released while waiting, held again on return)
// until `condition` holds or SteadyNow() reaches `steady_deadline`; returns whether
// `condition` holds. Like Mutex::Await, `condition` is re-evaluated whenever `mu` is
// released by another thread. absl::InfiniteFuture() waits untimed.
bool AwaitSteady(absl::Mutex& mu, const absl::Condition& condition, absl::Time steady_deadline)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);

// AwaitSteady with a timeout from now.
inline bool AwaitSteadyFor(absl::Mutex& mu, const absl::Condition& condition, absl::Duration timeout)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
  return AwaitSteady(mu, condition, SteadyNow() + timeout);
}

}  // namespace fleetmark
