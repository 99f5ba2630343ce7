// A clock injected into time-dependent logic (the coordinator's sweeps, leases,
// heartbeat timeouts and schedules; the agent's session) so tests control time
// (Envoy's TimeSource pattern). Header-only; no dependency beyond Abseil.
//
//   RealClock clock;                 // production
//   FakeClock fake(absl::FromUnixSeconds(0)); fake.Advance(absl::Minutes(5));   // tests
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
};

// absl::Now().
class RealClock : public Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
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
