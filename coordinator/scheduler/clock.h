// A clock injected into time-dependent coordinator logic (schedules, leases) so tests
// control time (Envoy's TimeSource pattern).
//
//   RealClock clock;                 // production
//   FakeClock fake(absl::FromUnixSeconds(0)); fake.Advance(absl::Minutes(5));   // tests
//
// Thread-safety: both implementations are safe to call from any thread.
#pragma once

#include <mutex>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace fleetmark::scheduler {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() const = 0;
};

class RealClock : public Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
};

// A clock that moves only when told to.
class FakeClock : public Clock {
 public:
  explicit FakeClock(absl::Time start) : now_(start) {}
  absl::Time Now() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return now_;
  }
  void Set(absl::Time t) {
    std::lock_guard<std::mutex> lock(mu_);
    now_ = t;
  }
  void Advance(absl::Duration d) {
    std::lock_guard<std::mutex> lock(mu_);
    now_ += d;
  }

 private:
  mutable std::mutex mu_;
  absl::Time now_;
};

}  // namespace fleetmark::scheduler
