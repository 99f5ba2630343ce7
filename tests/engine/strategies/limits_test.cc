// Concurrency caps (fixed_pool, limited), the fibre group's once-per-process rule, and
// resource exhaustion turned into ResourceExhausted instead of a crash.
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/time/clock.h"
#include "engine/strategies/executors/os_thread.h"
#include "engine/strategies/strategy.h"
#include "gtest/gtest.h"
#include "tests/engine/strategies/test_support.h"

namespace fleetmark::engine {
namespace {

using ::fleetmark::engine::testing::FixedWaitWorkload;
using ::fleetmark::engine::testing::HookRecorder;
using ::fleetmark::engine::testing::UnderAddressSanitizer;
using ::fleetmark::engine::testing::UnderThreadSanitizer;
using ::fleetmark::engine::testing::WaitForThreadCount;

class LimitsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(LimitsTest, FixedPoolNeverExceedsItsThreads) {
  constexpr int kTasks = 60;
  HookRecorder hooks(kTasks);
  auto strategy = *MakeStrategy("fixed_pool");
  ASSERT_TRUE(strategy->Start(hooks.Options(3)).ok());
  FixedWaitWorkload wait(absl::Milliseconds(2));
  for (int batch = 0; batch < 3; ++batch) {
    ASSERT_TRUE(strategy->RunBatch(wait, kTasks, IoMode::kBlocking).ok());
  }
  hooks.ExpectEachTask(3);
  EXPECT_LE(hooks.peak(), 3);
  EXPECT_GE(hooks.peak(), 2);  // the cap is reached in practice, so the check can fail
  EXPECT_EQ(strategy->peak_in_flight(), hooks.peak());
  strategy->Stop();
}

TEST_F(LimitsTest, LimitedCapsTasksInFlightBelowItsPool) {
  constexpr int kTasks = 60;
  HookRecorder hooks(kTasks);
  auto strategy = *MakeStrategy("limited");
  StrategyOptions options = hooks.Options(2);
  options.limit = 6;  // pool of 6 threads, at most 2 tasks at once
  ASSERT_TRUE(strategy->Start(options).ok());
  EXPECT_EQ(strategy->threads_used(), 6);
  EXPECT_EQ(hooks.thread_starts(), 6);
  FixedWaitWorkload wait(absl::Milliseconds(2));
  for (int batch = 0; batch < 3; ++batch) {
    ASSERT_TRUE(strategy->RunBatch(wait, kTasks, IoMode::kBlocking).ok());
  }
  hooks.ExpectEachTask(3);
  EXPECT_LE(hooks.peak(), 2);
  EXPECT_EQ(hooks.peak(), 2);
  EXPECT_LE(strategy->peak_in_flight(), 2);
  strategy->Stop();
}

TEST_F(LimitsTest, ElasticPoolGrowsToItsCapAndNoFurther) {
  constexpr int kTasks = 40;
  HookRecorder hooks(kTasks);
  auto strategy = *MakeStrategy("elastic_pool");
  ASSERT_TRUE(strategy->Start(hooks.Options(5)).ok());
  FixedWaitWorkload wait(absl::Milliseconds(3));
  ASSERT_TRUE(strategy->RunBatch(wait, kTasks, IoMode::kBlocking).ok());
  ASSERT_TRUE(strategy->RunBatch(wait, kTasks, IoMode::kBlocking).ok());
  hooks.ExpectEachTask(2);
  EXPECT_EQ(strategy->threads_used(), 5);
  EXPECT_EQ(hooks.thread_starts(), 5);  // reused in the second batch, not recreated
  EXPECT_LE(hooks.peak(), 5);
  strategy->Stop();
}

TEST_F(LimitsTest, WorkStealingBeyondTbbsWorkerCapStartsPromptly) {
  if (UnderThreadSanitizer()) GTEST_SKIP() << "libtbb is not TSan-instrumented";
  // Many more workers than CPUs: Start brings them in (or gives up soon after oneTBB
  // stops adding workers) without waiting for its 10 s deadline.
  const int threads = std::max(300, 4 * LogicalCpuCount() + 50);
  auto strategy = *MakeStrategy("work_stealing");
  const absl::Time start = absl::Now();
  ASSERT_TRUE(strategy->Start({.threads = threads}).ok());
  EXPECT_LT(absl::Now() - start, absl::Seconds(8));
  EXPECT_GE(strategy->threads_used(), 1);
  EXPECT_LE(strategy->threads_used(), threads);
  FixedWaitWorkload wait(absl::Milliseconds(1));
  EXPECT_TRUE(strategy->RunBatch(wait, 100, IoMode::kBlocking).ok());
  strategy->Stop();
}

TEST_F(LimitsTest, FiberWorkStealingGroupStartsOncePerProcess) {
  if (UnderThreadSanitizer()) GTEST_SKIP() << "Boost.Context is not TSan-annotated";
  EXPECT_EXIT(
      {
        constexpr int kTasks = 100;
        HookRecorder hooks(kTasks);
        const int before = ::fleetmark::engine::testing::CountThreads();
        auto first = *MakeStrategy("fiber");
        if (!first->Start(hooks.Options(2)).ok()) std::_Exit(10);
        auto network = *MakeWorkload("network");
        if (!first->RunBatch(*network, kTasks, IoMode::kSuspending).ok()) std::_Exit(11);
        hooks.ExpectEachTask(1);
        if (::testing::Test::HasFailure()) std::_Exit(12);
        first->Stop();
        if (WaitForThreadCount(before) != before) std::_Exit(13);
        auto second = *MakeStrategy("fiber");
        const absl::Status s = second->Start({.threads = 2});
        if (s.code() != absl::StatusCode::kFailedPrecondition) std::_Exit(14);
        if (s.message().find("own process") == std::string_view::npos) std::_Exit(15);
        // One thread uses round_robin, which has no process-wide state.
        auto single = *MakeStrategy("fiber");
        if (!single->Start({.threads = 1}).ok()) std::_Exit(16);
        if (!single->RunBatch(*network, 10, IoMode::kSuspending).ok()) std::_Exit(17);
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

// Virtual memory of this process in bytes (VmSize of /proc/self/status).
long long VmSizeBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmSize:", 0) == 0) return std::stoll(line.substr(7)) * 1024;
  }
  return -1;
}

// Limits this process's address space to its current size plus `headroom`, so thread
// stacks cannot be mapped (RLIMIT_AS binds root too, unlike RLIMIT_NPROC).
bool LimitAddressSpace(long long headroom) {
  const long long vm = VmSizeBytes();
  if (vm <= 0) return false;
  rlimit limit{static_cast<rlim_t>(vm + headroom), static_cast<rlim_t>(vm + headroom)};
  return setrlimit(RLIMIT_AS, &limit) == 0;
}

TEST_F(LimitsTest, ThreadPerTaskReportsResourceExhaustedInsteadOfCrashing) {
  if (UnderAddressSanitizer() || UnderThreadSanitizer()) {
    GTEST_SKIP() << "sanitizer runtimes need more address space than the limit leaves";
  }
  EXPECT_EXIT(
      {
        auto strategy = *MakeStrategy("thread_per_task");
        // 64 MiB stacks against 256 MiB of headroom: only a few threads fit.
        if (!strategy->Start({.stack_kib = 64 * 1024}).ok()) std::_Exit(10);
        FixedWaitWorkload wait(absl::Milliseconds(50));
        if (!LimitAddressSpace(256LL << 20)) std::_Exit(11);
        const absl::Status s = strategy->RunBatch(wait, 100, IoMode::kBlocking);
        if (s.code() != absl::StatusCode::kResourceExhausted) {
          std::fprintf(stderr, "got %s\n", s.ToString().c_str());
          std::_Exit(12);
        }
        if (s.message().find("of 100 threads") == std::string_view::npos) std::_Exit(13);
        strategy->Stop();
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST_F(LimitsTest, AsyncReportsResourceExhaustedInsteadOfCrashing) {
  if (UnderAddressSanitizer() || UnderThreadSanitizer()) {
    GTEST_SKIP() << "sanitizer runtimes need more address space than the limit leaves";
  }
  EXPECT_EXIT(
      {
        auto strategy = *MakeStrategy("async");
        if (!strategy->Start({}).ok()) std::_Exit(10);
        FixedWaitWorkload wait(absl::Milliseconds(50));
        // std::async threads get the default 8 MiB stack: 64 MiB leaves room for few.
        if (!LimitAddressSpace(64LL << 20)) std::_Exit(11);
        const absl::Status s = strategy->RunBatch(wait, 100, IoMode::kBlocking);
        if (s.code() != absl::StatusCode::kResourceExhausted) {
          std::fprintf(stderr, "got %s\n", s.ToString().c_str());
          std::_Exit(12);
        }
        strategy->Stop();
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace fleetmark::engine
