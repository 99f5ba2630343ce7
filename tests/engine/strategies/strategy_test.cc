// Contract tests run against every strategy of the registry: each task exactly once,
// hooks, thread accounting, idle threads blocked, nothing left after Stop, errors.
#include "engine/strategies/strategy.h"

#include <atomic>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <tuple>

#include "engine/common/registry.h"
#include "engine/strategies/registry.h"
#include "engine/strategies/executors/os_thread.h"
#include "gtest/gtest.h"
#include "tests/engine/strategies/test_support.h"

namespace fleetmark::engine {
namespace {

using ::fleetmark::engine::testing::CountThreads;
using ::fleetmark::engine::testing::FixedWaitWorkload;
using ::fleetmark::engine::testing::HookRecorder;
using ::fleetmark::engine::testing::ProcessCpuTime;
using ::fleetmark::engine::testing::TsanSkipReason;
using ::fleetmark::engine::testing::WaitForThreadCount;

class StrategyContractTest : public ::testing::TestWithParam<std::string_view> {
 protected:
  static void SetUpTestSuite() { GTEST_FLAG_SET(death_test_style, "threadsafe"); }

  void SetUp() override {
    if (const auto reason = TsanSkipReason(GetParam()); !reason.empty()) {
      GTEST_SKIP() << reason;
    }
  }

  // A fibre work-stealing group can be built once per process, so fiber cases with
  // more than one thread run `body` in a child process (exit code 0 = no failure).
  template <typename Body>
  void Isolated(Body body) {
    ::fleetmark::engine::testing::RunIsolatedIf(GetParam() == "fiber", body);
  }
};

TEST_P(StrategyContractTest, RunsEveryTaskExactlyOncePerBatch) {
  Isolated([&] {
    constexpr int kTasks = 200;
    HookRecorder hooks(kTasks);
    auto strategy = MakeStrategy(GetParam());
    ASSERT_TRUE(strategy.ok()) << strategy.status();
    EXPECT_EQ((*strategy)->name(), GetParam());
    ASSERT_TRUE((*strategy)->Start(hooks.Options(3)).ok());
    auto collections = *MakeWorkload("collections");
    auto storage = *MakeWorkload("storage");
    ASSERT_TRUE((*strategy)->RunBatch(*collections, kTasks, IoMode::kBlocking).ok());
    hooks.ExpectEachTask(1);
    ASSERT_TRUE((*strategy)->RunBatch(*storage, kTasks, IoMode::kBlocking).ok());
    hooks.ExpectEachTask(2);
    EXPECT_GE((*strategy)->peak_in_flight(), 1);
    EXPECT_GE(hooks.peak(), 1);
    EXPECT_LE((*strategy)->peak_in_flight(), kTasks);
    EXPECT_TRUE(hooks.TasksRanOnAnnouncedThreads() || GetParam() == "direct");
    (*strategy)->Stop();
  });
}

TEST_P(StrategyContractTest, ReportsThreadsAndAnnouncesEachThread) {
  Isolated([&] {
    constexpr int kTasks = 40;
    HookRecorder hooks(kTasks);
    auto strategy = *MakeStrategy(GetParam());
    ASSERT_TRUE(strategy->Start(hooks.Options(3)).ok());
    FixedWaitWorkload wait(absl::Milliseconds(2));
    ASSERT_TRUE(strategy->RunBatch(wait, kTasks, IoMode::kBlocking).ok());
    const std::string_view name = GetParam();
    int expected = 3;  // fixed_pool, elastic_pool (cap 3), coroutine, the OpenMP team, ...
    if (name == "direct") expected = 0;
    if (name == "single_thread") expected = 1;
    if (name == "thread_per_task" || name == "async") expected = kTasks;
    if (name == "limited") expected = std::max(3, LogicalCpuCount());
    if (name == "work_stealing" || name == "std_par") {
      // TBB decides how many workers join; all of them entered the arena at Start.
      EXPECT_GE(strategy->threads_used(), 1);
      EXPECT_LE(strategy->threads_used(), 3);
    } else {
      EXPECT_EQ(strategy->threads_used(), expected);
    }
    EXPECT_EQ(hooks.thread_starts(), strategy->threads_used());
    strategy->Stop();
  });
}

TEST_P(StrategyContractTest, LeavesNoThreadBehindAfterStop) {
  Isolated([&] {
    const int before = CountThreads();
    {
      auto strategy = *MakeStrategy(GetParam());
      ASSERT_TRUE(strategy->Start({.threads = 4}).ok());
      FixedWaitWorkload wait(absl::Milliseconds(1));
      ASSERT_TRUE(strategy->RunBatch(wait, 20, IoMode::kBlocking).ok());
      strategy->Stop();
      EXPECT_EQ(WaitForThreadCount(before), before) << "threads left after Stop";
      strategy->Stop();  // idempotent
      EXPECT_EQ(strategy->RunBatch(wait, 1, IoMode::kBlocking).code(), absl::StatusCode::kFailedPrecondition);
    }
    // The destructor alone also stops.
    {
      auto strategy = *MakeStrategy(GetParam());
      if (GetParam() == "fiber") return;  // one work-stealing group per process
      ASSERT_TRUE(strategy->Start({.threads = 2}).ok());
      FixedWaitWorkload wait(absl::Milliseconds(1));
      ASSERT_TRUE(strategy->RunBatch(wait, 10, IoMode::kBlocking).ok());
    }
    EXPECT_EQ(WaitForThreadCount(before), before) << "threads left after destruction";
  });
}

TEST_P(StrategyContractTest, IdleThreadsDoNotSpinBetweenBatches) {
  Isolated([&] {
    auto strategy = *MakeStrategy(GetParam());
    ASSERT_TRUE(strategy->Start({.threads = 2}).ok());
    FixedWaitWorkload wait(absl::Milliseconds(1));
    ASSERT_TRUE(strategy->RunBatch(wait, 20, IoMode::kBlocking).ok());
    absl::SleepFor(absl::Milliseconds(100));  // let schedulers settle (TBB spins briefly)
    const absl::Duration cpu_before = ProcessCpuTime();
    absl::SleepFor(absl::Milliseconds(400));
    const absl::Duration burned = ProcessCpuTime() - cpu_before;
    // Two spinning threads would burn ~800 ms; blocked ones burn almost nothing.
    EXPECT_LT(burned, absl::Milliseconds(100)) << "idle CPU " << burned;
    strategy->Stop();
  });
}

TEST_P(StrategyContractTest, SuspendingModeIsSupportedOrUnimplemented) {
  Isolated([&] {
    auto strategy = *MakeStrategy(GetParam());
    ASSERT_TRUE(strategy->Start({.threads = 2}).ok());
    FixedWaitWorkload wait(absl::Milliseconds(1));
    const absl::Status s = strategy->RunBatch(wait, 10, IoMode::kSuspending);
    bool registry_says = false;
    for (const auto& info : kStrategies) {
      if (info.name == GetParam()) registry_says = info.suspending;
    }
    EXPECT_EQ(strategy->SupportsSuspending(), registry_says);
    if (registry_says) {
      EXPECT_TRUE(s.ok()) << s;
    } else {
      EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
      EXPECT_NE(s.message().find("suspending"), std::string_view::npos) << s;
      EXPECT_NE(std::string(s.message()).find(GetParam()), std::string::npos) << s;
    }
    // Blocking still works afterwards.
    EXPECT_TRUE(strategy->RunBatch(wait, 10, IoMode::kBlocking).ok());
    strategy->Stop();
  });
}

// Each strategy's unsupported message describes that strategy: single_thread has one
// worker thread, not a pool (issue 16, item 4).
TEST(StrategyTest, UnsupportedMessageDescribesTheStrategy) {
  {
    for (const auto& [name, words, not_words] :
         {std::tuple<const char*, const char*, const char*>{"single_thread", "its one worker OS thread", "pool"},
          {"fixed_pool", "pool OS threads", "one worker"}}) {
      auto strategy = *MakeStrategy(name);
      ASSERT_TRUE(strategy->Start({.threads = 2}).ok());
      FixedWaitWorkload wait(absl::Milliseconds(1));
      const std::string message(strategy->RunBatch(wait, 2, IoMode::kSuspending).message());
      EXPECT_NE(message.find(words), std::string::npos) << name << ": " << message;
      EXPECT_EQ(message.find(not_words), std::string::npos) << name << ": " << message;
      strategy->Stop();
    }
  }
}

TEST_P(StrategyContractTest, RejectsBadArguments) {
  // Only argument checks: no fibre group is built, so no child process is needed.
  auto strategy = *MakeStrategy(GetParam());
  FixedWaitWorkload none(absl::ZeroDuration());
  EXPECT_EQ(strategy->RunBatch(none, 1, IoMode::kBlocking).code(),
            absl::StatusCode::kFailedPrecondition);  // not started
  for (StrategyOptions bad : {StrategyOptions{.threads = -1}, StrategyOptions{.threads = 10001},
                              StrategyOptions{.stack_kib = 4}, StrategyOptions{.limit = -2}}) {
    auto s = (*MakeStrategy(GetParam()))->Start(bad);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  }
  auto threads_error = (*MakeStrategy(GetParam()))->Start({.threads = 20000});
  EXPECT_NE(threads_error.message().find("threads"), std::string_view::npos);
  EXPECT_NE(threads_error.message().find("20000"), std::string_view::npos);
}

TEST_P(StrategyContractTest, RejectsBadTaskCountsAndSecondStart) {
  Isolated([&] {
    auto strategy = *MakeStrategy(GetParam());
    ASSERT_TRUE(strategy->Start({.threads = 2}).ok());
    FixedWaitWorkload none(absl::ZeroDuration());
    EXPECT_EQ(strategy->RunBatch(none, -1, IoMode::kBlocking).code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(strategy->RunBatch(none, 1000001, IoMode::kBlocking).code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(strategy->RunBatch(none, 0, IoMode::kBlocking).ok());
    EXPECT_EQ(strategy->Start({}).code(), absl::StatusCode::kFailedPrecondition);
    strategy->Stop();
  });
}

TEST_P(StrategyContractTest, ThrowingHooksBecomeAnErrorNotAHangOrCrash) {
  Isolated([&] {
    std::atomic<bool> throw_once{true};
    StrategyOptions options;
    options.threads = 2;
    options.on_thread_start = [] { throw std::runtime_error("pinning failed"); };
    options.on_task_start = [&](int i) {
      if (i == 3 && throw_once.exchange(false)) throw std::runtime_error("hook failed");
    };
    auto strategy = *MakeStrategy(GetParam());
    ASSERT_TRUE(strategy->Start(options).ok());
    FixedWaitWorkload wait(absl::Milliseconds(1));
    const absl::Status s = strategy->RunBatch(wait, 10, IoMode::kBlocking);
    EXPECT_EQ(s.code(), absl::StatusCode::kInternal) << s;
    EXPECT_NE(std::string(s.message()).find("hook failed"), std::string::npos) << s;
    EXPECT_TRUE(strategy->RunBatch(wait, 10, IoMode::kBlocking).ok());
    strategy->Stop();
  });
}

std::vector<std::string_view> AllStrategyNames() {
  std::vector<std::string_view> names;
  for (const auto& info : kStrategies) names.push_back(info.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(AllStrategies, StrategyContractTest, ::testing::ValuesIn(AllStrategyNames()),
                         [](const auto& info) { return std::string(info.param); });

TEST(MakeStrategyTest, UnknownNameListsTheAllowedOnes) {
  auto s = MakeStrategy("green_threads");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("green_threads"), std::string_view::npos);
  EXPECT_NE(s.status().message().find("work_stealing"), std::string_view::npos);
}

TEST(IoModeTest, ParsesBothNames) {
  EXPECT_EQ(*ParseIoMode("blocking"), IoMode::kBlocking);
  EXPECT_EQ(*ParseIoMode("suspending"), IoMode::kSuspending);
  EXPECT_EQ(IoModeName(IoMode::kSuspending), "suspending");
  EXPECT_EQ(ParseIoMode("async").status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace fleetmark::engine
