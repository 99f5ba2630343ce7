// Waiting semantics: suspending waits overlap on one thread; blocking waits on k
// threads overlap k at a time, so a batch takes at least ceil(n/k) x wait. Only lower
// bounds are timed (a wait cannot end early on any machine); the overlap is asserted
// by the strategies' peak in-flight count, never by an upper time bound (the CI
// machines are shared and noisy: the study plans in plans/ measure the times).
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "absl/time/clock.h"
#include "engine/strategies/strategy.h"
#include "gtest/gtest.h"
#include "tests/engine/strategies/test_support.h"

namespace fleetmark::engine {
namespace {

using ::fleetmark::engine::testing::FixedWaitWorkload;
using ::fleetmark::engine::testing::HookRecorder;
using ::fleetmark::engine::testing::TsanSkipReason;

absl::StatusOr<absl::Duration> TimeBatch(Strategy& strategy, const Workload& workload, int n, IoMode mode) {
  const absl::Time start = absl::Now();
  absl::Status s = strategy.RunBatch(workload, n, mode);
  if (!s.ok()) return s;
  return absl::Now() - start;
}

class SuspendingOnOneThreadTest : public ::testing::TestWithParam<std::string_view> {};

// S1's network workload (task i waits i ms) on ONE carrier thread: suspending waits
// overlap, so the batch takes about the longest wait (99 ms), not the sum (4.95 s).
TEST_P(SuspendingOnOneThreadTest, HundredNetworkTasksTakeTheLongestWait) {
  if (const auto reason = TsanSkipReason(GetParam()); !reason.empty()) {
    GTEST_SKIP() << reason;
  }
  HookRecorder hooks(100);
  auto strategy = *MakeStrategy(GetParam());
  ASSERT_TRUE(strategy->Start(hooks.Options(1)).ok());
  ASSERT_EQ(strategy->threads_used(), 1);
  auto network = *MakeWorkload("network");
  auto elapsed = TimeBatch(*strategy, *network, 100, IoMode::kSuspending);
  ASSERT_TRUE(elapsed.ok()) << elapsed.status();
  EXPECT_GE(*elapsed, absl::Milliseconds(99));
  hooks.ExpectEachTask(1);
  EXPECT_GE(strategy->peak_in_flight(), 50);  // most tasks were waiting at once
  strategy->Stop();
}

INSTANTIATE_TEST_SUITE_P(Suspending, SuspendingOnOneThreadTest, ::testing::Values("coroutine", "fiber", "event_loop"),
                         [](const auto& info) { return std::string(info.param); });

struct BlockingCase {
  std::string_view strategy;
  int threads;   // StrategyOptions::threads
  int parallel;  // k: tasks that can wait at once
};

class BlockingWaitTest : public ::testing::TestWithParam<BlockingCase> {};

// n tasks each blocking 25 ms on k carriers take at least ceil(n/k) x 25 ms, and at
// most k of them wait at once.
TEST_P(BlockingWaitTest, FollowsCeilNOverKTimesWait) {
  const BlockingCase c = GetParam();
  if (const auto reason = TsanSkipReason(c.strategy); !reason.empty()) {
    GTEST_SKIP() << reason;
  }
  constexpr int kTasks = 16;
  const absl::Duration wait = absl::Milliseconds(25);
  auto strategy = *MakeStrategy(c.strategy);
  ASSERT_TRUE(strategy->Start({.threads = c.threads}).ok());
  FixedWaitWorkload workload(wait);
  // A first batch warms up lazily created threads (elastic_pool), as the runner's
  // warm-up does.
  ASSERT_TRUE(strategy->RunBatch(workload, kTasks, IoMode::kBlocking).ok());
  auto elapsed = TimeBatch(*strategy, workload, kTasks, IoMode::kBlocking);
  ASSERT_TRUE(elapsed.ok()) << elapsed.status();
  const absl::Duration expected = wait * std::ceil(double{kTasks} / c.parallel);
  EXPECT_GE(*elapsed, expected * 0.95) << c.strategy << " k=" << c.parallel;
  EXPECT_LE(strategy->peak_in_flight(), c.parallel);
  EXPECT_GE(strategy->peak_in_flight(), std::min(c.parallel, 2)) << "waits did not overlap";
  strategy->Stop();
}

INSTANTIATE_TEST_SUITE_P(Blocking, BlockingWaitTest,
                         ::testing::Values(BlockingCase{"direct", 0, 1}, BlockingCase{"single_thread", 0, 1},
                                           BlockingCase{"fixed_pool", 4, 4}, BlockingCase{"work_stealing", 4, 4},
                                           BlockingCase{"limited", 4, 4}, BlockingCase{"elastic_pool", 4, 4},
                                           BlockingCase{"thread_per_task", 0, 16}, BlockingCase{"async", 0, 16},
                                           BlockingCase{"coroutine", 4, 4}, BlockingCase{"event_loop", 4, 4},
                                           BlockingCase{"fiber", 1, 1}),
                         [](const auto& info) {
                           return std::string(info.param.strategy) + "_k" + std::to_string(info.param.parallel);
                         });

}  // namespace
}  // namespace fleetmark::engine
