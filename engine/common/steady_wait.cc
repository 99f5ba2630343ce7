#include "engine/common/steady_wait.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

namespace fleetmark {
namespace {

using SteadyPoint = std::chrono::steady_clock::time_point;

SteadyPoint ToSteadyPoint(absl::Time steady) {
  return SteadyPoint(std::chrono::nanoseconds(absl::ToUnixNanos(steady)));
}

// One wait's alarm. `waiter_mu` is touched only under `guard` and while `armed`, so the
// waiter, which disarms it under `guard` before it returns, may destroy its mutex after.
struct Alarm {
  std::mutex guard;
  bool armed = true;
  absl::Mutex* waiter_mu = nullptr;
  std::atomic<bool> rang{false};
  bool queued = false;  // in AlarmClock::alarms_ (guarded by AlarmClock::mu_)
  std::multimap<std::chrono::steady_clock::time_point, std::shared_ptr<Alarm>>::iterator at;
};

// The process-wide timer thread (never destroyed: waits may run during exit). Its locks
// are std's, the mutex convention's exception (docs/contributing.md): it needs a wait on
// the monotonic clock, which Abseil's timed waits are not.
class AlarmClock {
 public:
  AlarmClock() {
    std::thread([this] { Loop(); }).detach();
  }

  void Set(SteadyPoint when, const std::shared_ptr<Alarm>& alarm) {
    std::lock_guard<std::mutex> lock(mu_);
    const bool earliest = alarms_.empty() || when < alarms_.begin()->first;
    alarm->at = alarms_.emplace(when, alarm);
    alarm->queued = true;
    if (earliest) cv_.notify_one();
  }

  // Takes a wait's alarm out before its time (the wait ended early).
  void Cancel(const std::shared_ptr<Alarm>& alarm) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!alarm->queued) return;
    alarms_.erase(alarm->at);
    alarm->queued = false;
  }

 private:
  void Loop() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      if (alarms_.empty()) {
        cv_.wait(lock);
        continue;
      }
      const SteadyPoint next = alarms_.begin()->first;
      if (std::chrono::steady_clock::now() < next) {
        cv_.wait_until(lock, next);  // CLOCK_MONOTONIC (pthread_cond_clockwait)
        continue;
      }
      std::shared_ptr<Alarm> alarm = std::move(alarms_.begin()->second);
      alarms_.erase(alarms_.begin());
      alarm->queued = false;
      lock.unlock();
      const bool again = !Ring(*alarm);
      lock.lock();
      if (again) {  // the waiter's mutex was held: ring once more in a millisecond
        alarm->at = alarms_.emplace(std::chrono::steady_clock::now() + std::chrono::milliseconds(1), alarm);
        alarm->queued = true;
      }
    }
  }

  // Sets `rang`, then makes the waiter's mutex re-evaluate its conditions: an unlock
  // does. Never blocks on that mutex (its holder may be cancelling this alarm): when
  // TryLock fails, returns false to be rung again shortly (the holder's own unlock
  // may have evaluated the condition just before `rang` was set).
  static bool Ring(Alarm& alarm) {
    std::lock_guard<std::mutex> lock(alarm.guard);
    if (!alarm.armed) return true;
    alarm.rang.store(true);
    if (!alarm.waiter_mu->TryLock()) return false;
    alarm.waiter_mu->Unlock();
    return true;
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::multimap<SteadyPoint, std::shared_ptr<Alarm>> alarms_;
};

AlarmClock& TheAlarmClock() {
  static AlarmClock* const clock = new AlarmClock();
  return *clock;
}

}  // namespace

absl::Time SteadyNow() {
  return absl::FromUnixNanos(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

bool AwaitSteady(absl::Mutex& mu, const absl::Condition& condition, absl::Time steady_deadline) {
  if (condition.Eval()) return true;
  if (steady_deadline == absl::InfiniteFuture()) {
    mu.Await(condition);
    return true;
  }
  if (SteadyNow() >= steady_deadline) return false;
  auto alarm = std::make_shared<Alarm>();
  alarm->waiter_mu = &mu;
  TheAlarmClock().Set(ToSteadyPoint(steady_deadline), alarm);
  auto woken = [&condition, &alarm] { return alarm->rang.load() || condition.Eval(); };
  mu.Await(absl::Condition(&woken));
  {
    std::lock_guard<std::mutex> lock(alarm->guard);
    alarm->armed = false;
  }
  TheAlarmClock().Cancel(alarm);
  return condition.Eval();
}

}  // namespace fleetmark
