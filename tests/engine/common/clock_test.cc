// The injected clock's two timelines (engine/common/clock.h) and the step-proof timed
// wait under them (engine/common/steady_wait.h). Issue 32, item 5.
#include "engine/common/clock.h"

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace fleetmark {
namespace {

TEST(ClockTest, AWallClockStepMovesNoSteadyTime) {
  const absl::Time t0 = absl::FromUnixSeconds(1'800'000'000);
  FakeClock clock(t0);
  const absl::Time steady0 = clock.SteadyNow();
  clock.Advance(absl::Seconds(2));
  clock.StepWall(-absl::Hours(1));
  EXPECT_EQ(clock.Now(), t0 + absl::Seconds(2) - absl::Hours(1));
  EXPECT_EQ(clock.SteadyNow() - steady0, absl::Seconds(2));
  clock.Set(t0 + absl::Seconds(3));  // set forward: as much time passes
  EXPECT_EQ(clock.SteadyNow() - steady0, absl::Seconds(2) + absl::Hours(1) + absl::Seconds(1));
}

TEST(ClockTest, AStampedSpanEndsAtItsStartPlusItsSteadyDuration) {
  const absl::Time t0 = absl::FromUnixSeconds(1'800'000'000);
  FakeClock clock(t0);
  StampedSpan span(clock);
  clock.Advance(absl::Seconds(2));
  clock.StepWall(-absl::Hours(1));
  clock.Advance(absl::Seconds(3));
  EXPECT_EQ(span.start(), t0);
  EXPECT_EQ(span.End(), t0 + absl::Seconds(5));  // the wall clock reads t0 - 1h + 5 s
  EXPECT_EQ(span.Elapsed(), absl::Seconds(5));
  EXPECT_EQ(span.WallStep(), -absl::Hours(1));
  StampedSpan calm(clock);
  clock.Advance(absl::Seconds(1));
  EXPECT_EQ(calm.WallStep(), absl::ZeroDuration());
  EXPECT_FALSE(StampedSpan().started());
}

TEST(ClockTest, SteadyTimeNeverGoesBack) {
  absl::Time last = SteadyNow();
  for (int i = 0; i < 100000; ++i) {
    const absl::Time now = SteadyNow();
    ASSERT_GE(now, last);
    last = now;
  }
}

TEST(SteadyWaitTest, ATimedWaitEndsAtItsDeadlineOrWhenItsConditionHolds) {
  absl::Mutex mu;
  bool done = false;
  {
    absl::MutexLock lock(&mu);
    const absl::Time start = SteadyNow();
    EXPECT_FALSE(AwaitSteadyFor(mu, absl::Condition(&done), absl::Milliseconds(30)));
    EXPECT_GE(SteadyNow() - start, absl::Milliseconds(30));
    EXPECT_FALSE(AwaitSteady(mu, absl::Condition(&done), SteadyNow() - absl::Seconds(1)));  // past
  }
  std::thread setter([&] {
    absl::SleepFor(absl::Milliseconds(20));
    absl::MutexLock lock(&mu);
    done = true;
  });
  {
    absl::MutexLock lock(&mu);
    EXPECT_TRUE(AwaitSteadyFor(mu, absl::Condition(&done), absl::Minutes(10)));  // not the deadline
    EXPECT_TRUE(AwaitSteady(mu, absl::Condition(&done), absl::InfiniteFuture()));
  }
  setter.join();
}

// Many threads, each waiting on its own short-lived mutex, most ending before their
// alarm rings: every wait returns, and a mutex freed after its wait is never touched
// again (the sanitizer runs watch).
TEST(SteadyWaitTest, ManyShortWaitsOnMutexesThatDieAfterwards) {
  std::vector<std::thread> threads;
  std::atomic<int> timed_out{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        auto mu = std::make_unique<absl::Mutex>();
        bool never = false;
        absl::MutexLock lock(mu.get());
        if (!AwaitSteadyFor(*mu, absl::Condition(&never), absl::Microseconds((i + t) % 3 == 0 ? 200 : 0))) {
          timed_out.fetch_add(1);
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(timed_out.load(), 8 * 200);
}

TEST(SteadyWaitTest, TheRealClockWaitsOnSteadyTime) {
  absl::Mutex mu;
  bool never = false;
  absl::MutexLock lock(&mu);
  const Clock& clock = SystemClock();
  const absl::Time start = clock.SteadyNow();
  EXPECT_FALSE(clock.AwaitWithDeadline(mu, absl::Condition(&never), start + absl::Milliseconds(20)));
  EXPECT_GE(clock.SteadyNow() - start, absl::Milliseconds(20));
}

}  // namespace
}  // namespace fleetmark
