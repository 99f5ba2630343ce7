// Executor (coordinator/service/executor.h): delayed tasks follow the executor's clock
// (issue 33 item 2: timers on a fake timer), so a test moves a PostAfter without waiting.
#include "coordinator/service/executor.h"

#include <atomic>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "engine/common/clock.h"
#include "gtest/gtest.h"

namespace fleetmark::service {
namespace {

// An hour's delay on a FakeClock: not run while the clock stands (a task posted after it
// has run meanwhile, so the thread was free), run as soon as the clock is an hour on;
// a two-hour one waits for its own time.
TEST(ExecutorTest, DelayedTasksRunWhenTheClockReachesThem) {
  FakeClock clock(absl::FromUnixSeconds(1'700'000'000));
  Executor executor(1, clock);
  std::atomic<int> ran{0};
  absl::Notification hour, two_hours, now;
  executor.PostAfter(absl::Hours(2), [&] {
    ++ran;
    two_hours.Notify();
  });
  executor.PostAfter(absl::Hours(1), [&] {
    ++ran;
    hour.Notify();
  });
  executor.Post([&] { now.Notify(); });
  ASSERT_TRUE(now.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_EQ(ran.load(), 0);
  EXPECT_EQ(executor.pending(), 2u);

  clock.Advance(absl::Hours(1));
  ASSERT_TRUE(hour.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_FALSE(two_hours.HasBeenNotified());
  EXPECT_EQ(executor.pending(), 1u);

  clock.Advance(absl::Hours(1));
  ASSERT_TRUE(two_hours.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_EQ(ran.load(), 2);
}

// Shutdown does not wait for a delayed task's time (the fake clock never moves).
TEST(ExecutorTest, ShutdownDropsADelayedTaskWithoutWaitingForIt) {
  FakeClock clock(absl::FromUnixSeconds(0));
  std::atomic<bool> ran{false};
  {
    Executor executor(2, clock);
    executor.PostAfter(absl::Minutes(5), [&] { ran = true; });
    executor.Shutdown();
    EXPECT_EQ(executor.pending(), 0u);
  }
  EXPECT_FALSE(ran.load());
}

}  // namespace
}  // namespace fleetmark::service
