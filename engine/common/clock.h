// A clock injected into time-dependent logic (the coordinator's sweeps, leases,
// heartbeat timeouts and schedules; the agent's session; the runner's case stamps) so
// tests control time (Envoy's TimeSource pattern).
//
// Two timelines: Now() is the wall clock, for stamps people read and for schedules;
// SteadyNow() is a monotonic clock for every duration, deadline, timeout and liveness
// check, so a wall-clock step (NTP, an operator's `date -s`) neither stalls a wait nor
// makes a duration negative (issue 32). A FakeClock moves both with Advance and only
// the wall clock with StepWall.
//
//   RealClock clock;                 // production
//   FakeClock fake(absl::FromUnixSeconds(0)); fake.Advance(absl::Minutes(5));   // tests
//   fake.StepWall(-absl::Hours(1));  // the wall clock set back; steady time goes on
//   clock.AwaitWithDeadline(mu, absl::Condition(&stop), clock.SteadyNow() + delay);  // a timed wait
//
// Thread-safety: both implementations are safe to call from any thread.
#pragma once

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "engine/common/steady_wait.h"

namespace fleetmark {

class Clock {
 public:
  virtual ~Clock() = default;
  // The current wall-clock time (UTC): for stamps and schedules, never for durations.
  virtual absl::Time Now() const = 0;
  // Steady time (steady_wait.h's SteadyNow for a RealClock): for durations, deadlines
  // and liveness. Only differences between readings of the same clock mean anything.
  virtual absl::Time SteadyNow() const = 0;

  // Waits on `mu` (held by the caller; released while waiting, held again on return)
  // until `condition` holds or this clock's SteadyNow() reaches `steady_deadline`;
  // returns whether `condition` holds. The default re-checks SteadyNow() every
  // millisecond of real steady time, so a FakeClock's deadline passes soon after a test
  // advances it past the deadline.
  virtual bool AwaitWithDeadline(absl::Mutex& mu, const absl::Condition& condition, absl::Time steady_deadline) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    while (!condition.Eval()) {
      if (SteadyNow() >= steady_deadline) return false;
      AwaitSteadyFor(mu, condition, absl::Milliseconds(1));
    }
    return true;
  }
};

// absl::Now() and the monotonic clock.
class RealClock : public Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
  absl::Time SteadyNow() const override { return ::fleetmark::SteadyNow(); }
  bool AwaitWithDeadline(absl::Mutex& mu, const absl::Condition& condition, absl::Time steady_deadline) const override
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    return AwaitSteady(mu, condition, steady_deadline);
  }
};

// The process-wide real clock, for defaults (never destroyed).
inline const Clock& SystemClock() {
  static const RealClock* const kClock = new RealClock();
  return *kClock;
}

// A wall clock that moved this much more or less than steady time over an interval was
// stepped (NTP slews far slower): the coordinator's sweeper and the runner's notes.
inline constexpr absl::Duration kWallClockStep = absl::Seconds(1);

// The wall-clock stamps of a span of work (a case) that cannot end before they start:
// the start is the wall clock when it began, the end that start plus the steady time
// since, so a wall-clock step in between moves neither the duration nor the order.
// WallStep() says how far the wall clock was stepped meanwhile (0 when it was not),
// for recording the step as a condition of the work. Not thread-safe (one owner).
class StampedSpan {
 public:
  StampedSpan() = default;
  explicit StampedSpan(const Clock& clock) : clock_(&clock), start_(clock.Now()), steady_start_(clock.SteadyNow()) {}
  bool started() const { return clock_ != nullptr; }
  absl::Time start() const { return start_; }
  absl::Duration Elapsed() const { return clock_->SteadyNow() - steady_start_; }
  absl::Time End() const { return start_ + Elapsed(); }
  // (wall clock now - start) - Elapsed(): negative when the wall clock was set back.
  absl::Duration WallStep() const {
    const absl::Time steady = clock_->SteadyNow();
    return (clock_->Now() - start_) - (steady - steady_start_);
  }

 private:
  const Clock* clock_ = nullptr;
  absl::Time start_;
  absl::Time steady_start_;
};

// A clock that moves only when told to. Its steady time starts at `start` too.
class FakeClock : public Clock {
 public:
  explicit FakeClock(absl::Time start) : now_(start), steady_(start) {}
  absl::Time Now() const override {
    absl::MutexLock lock(&mu_);
    return now_;
  }
  absl::Time SteadyNow() const override {
    absl::MutexLock lock(&mu_);
    return steady_;
  }
  // Sets the wall clock to `t`; steady time moves forward by as much if `t` is later,
  // and stays if it is earlier (as a real clock set back).
  void Set(absl::Time t) {
    absl::MutexLock lock(&mu_);
    if (t > now_) steady_ += t - now_;
    now_ = t;
  }
  // Time passes: both clocks move by `d` (>= 0).
  void Advance(absl::Duration d) {
    absl::MutexLock lock(&mu_);
    now_ += d;
    steady_ += d;
  }
  // The wall clock is stepped by `d` (negative: set back), taking no time: steady time
  // does not move.
  void StepWall(absl::Duration d) {
    absl::MutexLock lock(&mu_);
    now_ += d;
  }

 private:
  mutable absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
  absl::Time steady_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fleetmark
