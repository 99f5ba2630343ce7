// A clock injected into time-dependent logic (the coordinator's sweeps, leases,
// heartbeat timeouts and schedules; the agent's session) so tests control time
// (Envoy's TimeSource pattern). Header-only; no dependency beyond Abseil.
//
//   RealClock clock;                 // production
//   FakeClock fake(absl::FromUnixSeconds(0)); fake.Advance(absl::Minutes(5));   // tests
//   clock.AwaitWithDeadline(mu, absl::Condition(&stop), clock.Now() + delay);  // a timed wait
//
// Thread-safety: both implementations are safe to call from any thread.
#pragma once

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace fleetmark {

class Clock {
 public:
  virtual ~Clock() = default;
  // The current time (UTC).
  virtual absl::Time Now() const = 0;

  // Waits on `mu` (held by the caller; released while waiting, held again on return)
  // until `condition` holds or this clock reaches `deadline`; returns whether
  // `condition` holds. The default re-checks Now() every millisecond of real time, so
  // a FakeClock's deadline passes soon after a test advances it past the deadline.
  virtual bool AwaitWithDeadline(absl::Mutex& mu, const absl::Condition& condition, absl::Time deadline) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    while (!condition.Eval()) {
      if (Now() >= deadline) return false;
      mu.AwaitWithTimeout(condition, absl::Milliseconds(1));
    }
    return true;
  }
};

// absl::Now().
class RealClock : public Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
  bool AwaitWithDeadline(absl::Mutex& mu, const absl::Condition& condition, absl::Time deadline) const override
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    return mu.AwaitWithDeadline(condition, deadline);
  }
};

// The process-wide real clock, for defaults (never destroyed).
inline const Clock& SystemClock() {
  static const RealClock* const kClock = new RealClock();
  return *kClock;
}

// A clock that moves only when told to.
class FakeClock : public Clock {
 public:
  explicit FakeClock(absl::Time start) : now_(start) {}
  absl::Time Now() const override {
    absl::MutexLock lock(&mu_);
    return now_;
  }
  void Set(absl::Time t) {
    absl::MutexLock lock(&mu_);
    now_ = t;
  }
  void Advance(absl::Duration d) {
    absl::MutexLock lock(&mu_);
    now_ += d;
  }

 private:
  mutable absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fleetmark
