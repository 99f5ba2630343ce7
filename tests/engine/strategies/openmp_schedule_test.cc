// What only the OpenMP and std_par strategies have: the loop schedule and chunk of the
// openmp_for entries really applied (static hands out contiguous blocks in thread
// order, the chunk `limit` deals them round-robin), the options they refuse, and a
// build without OpenMP saying so. The contract (every task once, hooks, threads used,
// nothing left after Stop, idle threads blocked) is strategy_test.cc's, for every entry.
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/strategies/strategy.h"
#include "gtest/gtest.h"
#include "tests/engine/strategies/test_support.h"

namespace fleetmark::engine {
namespace {

using ::fleetmark::engine::testing::FixedWaitWorkload;
using ::fleetmark::engine::testing::TsanSkipReason;

#if defined(FLEETMARK_HAVE_OPENMP)

// Which thread ran each task of one batch of `n` tasks on `name` with 2 threads and
// chunk `limit`: a thread index per task, numbered in order of first appearance by task
// index (0 for the thread that ran task 0).
std::vector<int> ThreadOfEachTask(std::string_view name, int n, int limit) {
  std::mutex mu;
  std::map<int, std::thread::id> ran_on;
  StrategyOptions options;
  options.threads = 2;
  options.limit = limit;
  options.on_task_start = [&](int i) {
    std::lock_guard lock(mu);
    ran_on[i] = std::this_thread::get_id();
  };
  auto strategy = *MakeStrategy(name);
  EXPECT_TRUE(strategy->Start(options).ok());
  FixedWaitWorkload wait(absl::Milliseconds(1));
  EXPECT_TRUE(strategy->RunBatch(wait, n, IoMode::kBlocking).ok());
  EXPECT_EQ(strategy->threads_used(), 2);
  strategy->Stop();
  std::map<std::thread::id, int> index;
  std::vector<int> out;
  for (const auto& [task, id] : ran_on) out.push_back(index.emplace(id, static_cast<int>(index.size())).first->second);
  return out;
}

TEST(OpenMpScheduleTest, StaticGivesEachThreadOneContiguousBlock) {
  if (const auto reason = TsanSkipReason("openmp_for"); !reason.empty()) GTEST_SKIP() << reason;
  EXPECT_EQ(ThreadOfEachTask("openmp_for", 8, 0), (std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1}));
}

TEST(OpenMpScheduleTest, LimitIsTheChunkSize) {
  if (const auto reason = TsanSkipReason("openmp_for"); !reason.empty()) GTEST_SKIP() << reason;
  EXPECT_EQ(ThreadOfEachTask("openmp_for", 8, 1), (std::vector<int>{0, 1, 0, 1, 0, 1, 0, 1}));
  EXPECT_EQ(ThreadOfEachTask("openmp_for", 8, 2), (std::vector<int>{0, 0, 1, 1, 0, 0, 1, 1}));
}

TEST(OpenMpScheduleTest, DynamicAndGuidedRunEveryTaskWithAChunk) {
  if (const auto reason = TsanSkipReason("openmp_for_dynamic"); !reason.empty()) GTEST_SKIP() << reason;
  for (std::string_view name : {"openmp_for_dynamic", "openmp_for_guided"}) {
    EXPECT_EQ(ThreadOfEachTask(name, 40, 3).size(), 40u) << name;
  }
}

TEST(OpenMpScheduleTest, RefusesAChunkForTasksAndAStackSize) {
  auto task = *MakeStrategy("openmp_task");
  const absl::Status chunk = task->Start({.threads = 2, .limit = 4});
  EXPECT_EQ(chunk.code(), absl::StatusCode::kInvalidArgument) << chunk;
  EXPECT_NE(chunk.message().find("limit"), std::string_view::npos) << chunk;
  auto loop = *MakeStrategy("openmp_for");
  const absl::Status stack = loop->Start({.threads = 2, .stack_kib = 256});
  EXPECT_EQ(stack.code(), absl::StatusCode::kUnimplemented) << stack;
  EXPECT_NE(stack.message().find("OMP_STACKSIZE"), std::string_view::npos) << stack;
}

#else

TEST(OpenMpScheduleTest, BuildWithoutOpenMpReportsUnsupported) {
  for (std::string_view name : {"openmp_for", "openmp_for_dynamic", "openmp_for_guided", "openmp_task"}) {
    auto strategy = *MakeStrategy(name);
    const absl::Status s = strategy->Start({});
    EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << name;
    EXPECT_NE(s.message().find("built without OpenMP"), std::string_view::npos) << s;
  }
}

#endif

// std_par under a stack size: the arena's workers get it (as work_stealing's), and the
// batch runs.
TEST(StdParTest, RunsWithAStackSizeAndTwoThreads) {
  if (const auto reason = TsanSkipReason("std_par"); !reason.empty()) GTEST_SKIP() << reason;
  auto strategy = *MakeStrategy("std_par");
  ASSERT_TRUE(strategy->Start({.threads = 2, .stack_kib = 512}).ok());
  FixedWaitWorkload wait(absl::Milliseconds(1));
  ASSERT_TRUE(strategy->RunBatch(wait, 30, IoMode::kBlocking).ok());
  EXPECT_GE(strategy->threads_used(), 1);
  EXPECT_LE(strategy->threads_used(), 2);
  EXPECT_LE(strategy->peak_in_flight(), 2);
  strategy->Stop();
}

}  // namespace
}  // namespace fleetmark::engine
