// The descriptor budget's arithmetic and the admission counter
// (coordinator/service/stream_budget.h). Pure: no network, no database.
#include "coordinator/service/stream_budget.h"

#include <sys/resource.h>

#include <atomic>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace fleetmark::service {
namespace {

TEST(StreamBudgetTest, TheReserveCoversThePoolTheWebViewAndFivePercentOfHeadroom) {
  // 1 000 headroom + 8 pool + 1 listener + web view (8 database + 256 client
  // connections) + 32 fixed.
  EXPECT_EQ(DescriptorReserve(20000, 8, 8 + 256), 1305);
  // A small limit still keeps 64 descriptors of headroom.
  EXPECT_EQ(DescriptorReserve(256, 8, 0), 64 + 9 + 32);
}

TEST(StreamBudgetTest, TheBudgetIsTheLimitLessTheReserveLoweredByMaxAgentStreams) {
  EXPECT_EQ(StreamBudget(20000, 1081, 0), 18919);
  EXPECT_EQ(StreamBudget(20000, 1081, 500), 500);
  EXPECT_EQ(StreamBudget(20000, 1081, 50000), 18919);  // can only lower it
  EXPECT_EQ(StreamBudget(100, 105, 0), 1);             // never below one stream
}

TEST(StreamBudgetTest, RaisingTheLimitLeavesTheSoftLimitAtTheHardOne) {
  absl::StatusOr<DescriptorLimit> limit = RaiseDescriptorLimit();
  ASSERT_TRUE(limit.ok()) << limit.status();
  rlimit now{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &now), 0);
  EXPECT_EQ(limit->soft, limit->hard);
  EXPECT_EQ(static_cast<rlim_t>(limit->soft), now.rlim_cur == RLIM_INFINITY ? rlim_t{1} << 20 : now.rlim_cur);
}

TEST(StreamBudgetTest, SlotsAdmitUpToTheBudgetAndFreeOnRelease) {
  StreamSlots slots(2, 256);
  EXPECT_TRUE(slots.TryAcquire());
  EXPECT_TRUE(slots.TryAcquire());
  EXPECT_FALSE(slots.TryAcquire());
  EXPECT_EQ(slots.held(), 2);
  slots.Release();
  EXPECT_TRUE(slots.TryAcquire());
  EXPECT_EQ(slots.RefusalReason(), "coordinator at its stream limit 2 (RLIMIT_NOFILE 256)");
}

TEST(StreamBudgetTest, ConcurrentHellosNeverTakeMoreSlotsThanTheBudget) {
  StreamSlots slots(100, 1024);
  std::atomic<int> admitted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) admitted += slots.TryAcquire() ? 1 : 0;
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(admitted.load(), 100);
  EXPECT_EQ(slots.held(), 100);
}

}  // namespace
}  // namespace fleetmark::service
