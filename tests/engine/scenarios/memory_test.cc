// Memory scenario: the slope reflects what a task really holds, fibres are cheaper
// than threads, and exhausting the thread limit is a result, not a crash.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/scenarios/case_status.h"
#include "engine/scenarios/memory_scenario.h"
#include "engine/scenarios/scenario.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetmark::engine {
namespace {

using ::testing::HasSubstr;

v1::CaseSpec MemorySpec(const char* strategy, const char* io_mode, std::vector<uint32_t> counts) {
  v1::CaseSpec spec;
  spec.set_scenario("memory");
  spec.set_io_mode(io_mode);
  spec.mutable_strategy()->set_name(strategy);
  for (uint32_t n : counts) spec.mutable_memory()->add_task_counts(n);
  return spec;
}

v1::CaseResult RunCase(const v1::CaseSpec& spec) {
  absl::StatusOr<v1::CaseResult> result = RunScenarioCase(spec, {});
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *result : v1::CaseResult();
}

// A thread that touches k KiB of its stack costs at least k KiB more RSS.
TEST(MemoryScenarioTest, TouchedStackShowsInThreadSlope) {
  constexpr uint32_t kTouchKib = 128;
  v1::CaseSpec idle = MemorySpec("thread_per_task", "blocking", {50, 200, 400});
  idle.mutable_strategy()->set_stack_kib(512);
  v1::CaseSpec touching = idle;
  touching.mutable_memory()->set_touch_stack_kib(kTouchKib);
  const v1::CaseResult a = RunCase(idle), b = RunCase(touching);
  ASSERT_EQ(a.status(), v1::CASE_STATUS_OK) << a.message();
  ASSERT_EQ(b.status(), v1::CASE_STATUS_OK) << b.message();
  EXPECT_EQ(a.memory().stack_kib(), 512u);
  EXPECT_THAT(a.memory().stack_source(), HasSubstr("pthread_attr_setstacksize"));
  EXPECT_GT(a.memory().r_squared(), 0.9);
  EXPECT_GT(b.memory().r_squared(), 0.9);
  EXPECT_GE(b.memory().slope_kib_per_task() - a.memory().slope_kib_per_task(), kTouchKib - 0.5)
      << "idle " << a.memory().slope_kib_per_task() << " KiB/task, touching " << b.memory().slope_kib_per_task()
      << " KiB/task";
  EXPECT_EQ(a.memory().points_size(), 3);
}

// A fibre costs less than a thread. Compared on RSS + kernel stack: RSS alone omits the
// 16 KiB kernel stack every OS thread has (and a fibre does not).
TEST(MemoryScenarioTest, FibreCostsLessThanThread) {
  const v1::CaseResult threads = RunCase(MemorySpec("thread_per_task", "blocking", {100, 500, 1000}));
  v1::CaseSpec fibre_spec = MemorySpec("fiber", "suspending", {100, 500, 1000});
  fibre_spec.mutable_strategy()->set_threads(2);
  const v1::CaseResult fibres = RunCase(fibre_spec);
  ASSERT_EQ(threads.status(), v1::CASE_STATUS_OK) << threads.message();
  ASSERT_EQ(fibres.status(), v1::CASE_STATUS_OK) << fibres.message();
  const v1::MemoryResult& t = threads.memory();
  const v1::MemoryResult& f = fibres.memory();
  EXPECT_GT(f.slope_kib_per_task(), 0.0);
  // Each thread adds a kernel stack; fibres add none (generous: other processes churn).
  EXPECT_GT(t.kernel_stack_slope_kib_per_task(), 8.0);
  EXPECT_LT(f.kernel_stack_slope_kib_per_task(), 4.0);
  EXPECT_LT(f.total_slope_kib_per_task(), t.total_slope_kib_per_task())
      << "fibre RSS " << f.slope_kib_per_task() << " + kernel " << f.kernel_stack_slope_kib_per_task()
      << " vs thread RSS " << t.slope_kib_per_task() << " + kernel " << t.kernel_stack_slope_kib_per_task()
      << " KiB/task";
}

TEST(MemoryScenarioTest, CoroutinesAndCallbacksAreCheap) {
  for (const char* strategy : {"coroutine", "event_loop"}) {
    v1::CaseSpec spec = MemorySpec(strategy, "suspending", {1000, 5000, 10000});
    spec.mutable_strategy()->set_threads(1);
    const v1::CaseResult r = RunCase(spec);
    ASSERT_EQ(r.status(), v1::CASE_STATUS_OK) << strategy << ": " << r.message();
    EXPECT_LT(r.memory().slope_kib_per_task(), 4.0) << strategy;
    EXPECT_EQ(r.memory().stack_kib(), 0u);
  }
}

TEST(MemoryScenarioTest, UnsupportedCombinationsSayWhy) {
  v1::CaseResult r = RunCase(MemorySpec("thread_per_task", "suspending", {1, 10}));
  EXPECT_EQ(r.status(), v1::CASE_STATUS_UNSUPPORTED);
  EXPECT_THAT(r.message(), HasSubstr("no suspending wait"));
  r = RunCase(MemorySpec("direct", "blocking", {1, 10}));
  EXPECT_EQ(r.status(), v1::CASE_STATUS_UNSUPPORTED);
  // The child's own reason, not "child process: ..." (that prefix is for a child that failed).
  EXPECT_THAT(r.message(), HasSubstr("memory supports"));
  EXPECT_THAT(r.message(), ::testing::Not(HasSubstr("child process")));
}

TEST(MemoryScenarioTest, OnlyAChildThatFailedIsSaidToBeTheChildProcess) {
  EXPECT_EQ(ChildErrorMessage(absl::UnimplementedError("memory supports x; got y")), "memory supports x; got y");
  EXPECT_EQ(ChildErrorMessage(absl::InternalError("exited with signal 9")), "child process: exited with signal 9");
}

TEST(MemoryScenarioTest, BadSpecNamesTheField) {
  v1::CaseSpec spec = MemorySpec("fiber", "suspending", {0});
  const v1::CaseResult r = RunCase(spec);
  EXPECT_EQ(r.status(), v1::CASE_STATUS_FAILED);
  EXPECT_THAT(r.message(), HasSubstr("memory.task_counts[0]"));
}

TEST(MemoryScenarioTest, PlanCapSkipsPointsThatWouldNotFit) {
  v1::CaseSpec spec = MemorySpec("thread_per_task", "blocking", {10, 100, 20000});
  spec.mutable_memory()->set_max_memory_mib(64);
  const v1::CaseResult r = RunCase(spec);
  EXPECT_EQ(r.status(), v1::CASE_STATUS_RESOURCE_EXHAUSTED);
  ASSERT_EQ(r.memory().points_size(), 3);
  EXPECT_EQ(r.memory().points(0).status(), v1::CASE_STATUS_OK);
  EXPECT_EQ(r.memory().points(2).status(), v1::CASE_STATUS_RESOURCE_EXHAUSTED);
  EXPECT_THAT(r.memory().points(2).message(), HasSubstr("memory.max_memory_mib"));
}

// More threads than RLIMIT_NPROC allows: resource_exhausted with the reason, and this
// process carries on.
TEST(MemoryScenarioTest, ThreadLimitIsResourceExhaustedNotACrash) {
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_NPROC, &saved), 0);
  rlimit low = saved;
  low.rlim_cur = 200;
  ASSERT_EQ(setrlimit(RLIMIT_NPROC, &low), 0);
  const v1::CaseResult r = RunCase(MemorySpec("thread_per_task", "blocking", {10, 50, 5000}));
  ASSERT_EQ(setrlimit(RLIMIT_NPROC, &saved), 0);
  EXPECT_EQ(r.status(), v1::CASE_STATUS_RESOURCE_EXHAUSTED);
  EXPECT_THAT(r.message(), HasSubstr("RLIMIT_NPROC"));
  ASSERT_EQ(r.memory().points_size(), 3);
  EXPECT_EQ(r.memory().points(1).status(), v1::CASE_STATUS_OK);
  EXPECT_EQ(r.memory().points(2).status(), v1::CASE_STATUS_RESOURCE_EXHAUSTED);
  // Still alive and able to run another case.
  EXPECT_EQ(RunCase(MemorySpec("thread_per_task", "blocking", {1, 5})).status(), v1::CASE_STATUS_OK);
}

// When the kernel itself refuses threads (an unprivileged user over RLIMIT_NPROC; root
// is exempt), the point records it instead of crashing the process holding the tasks.
TEST(MemoryScenarioTest, RefusedThreadCreationIsRecorded) {
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    rlimit low{30, 30};
    if (setgid(65534) != 0 || setuid(65534) != 0 || setrlimit(RLIMIT_NPROC, &low) != 0) _exit(10);
    v1::CaseSpec spec = MemorySpec("thread_per_task", "blocking", {2000});
    spec.mutable_strategy()->set_stack_kib(64);
    absl::StatusOr<std::string> response = MemoryPointChild(spec.SerializeAsString());
    if (!response.ok()) _exit(11);
    v1::MemoryPoint point;
    if (!point.ParseFromString(*response)) _exit(12);
    if (point.status() != v1::CASE_STATUS_RESOURCE_EXHAUSTED) _exit(13);
    if (point.message().find("thread") == std::string::npos) _exit(14);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "child died by signal " << WTERMSIG(status);
  if (WEXITSTATUS(status) == 10) GTEST_SKIP() << "cannot drop privileges here";
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// KernelStack is system-wide: for fibres (no thread per task) its delta is noise only
// and stays out of the total; a 2-point fit (R^2 = 1 by construction) is flagged.
TEST(MemoryScenarioTest, NoiseIsNotReportedAsACost) {
  v1::CaseSpec spec = MemorySpec("fiber", "suspending", {1, 10});
  spec.mutable_strategy()->set_threads(1);
  const v1::CaseResult r = RunCase(spec);
  ASSERT_EQ(r.status(), v1::CASE_STATUS_OK) << r.message();
  EXPECT_EQ(r.memory().kernel_stack_slope_kib_per_task(), 0.0);
  EXPECT_DOUBLE_EQ(r.memory().total_slope_kib_per_task(), r.memory().slope_kib_per_task());
  EXPECT_THAT(r.message(), HasSubstr("only 2 points fitted"));
  if (r.memory().slope_kib_per_task() < 0) {
    EXPECT_THAT(r.message(), HasSubstr("< 0"));
  }
  // Threads: the kernel-stack cost counts, never below zero, so total >= RSS-only.
  const v1::CaseResult threads = RunCase(MemorySpec("thread_per_task", "blocking", {1, 10, 50}));
  ASSERT_EQ(threads.status(), v1::CASE_STATUS_OK) << threads.message();
  EXPECT_GE(threads.memory().kernel_stack_slope_kib_per_task(), -1e-9);
  EXPECT_GE(threads.memory().total_slope_kib_per_task(), threads.memory().slope_kib_per_task() - 1e-9);
  EXPECT_THAT(threads.message(), ::testing::Not(HasSubstr("points fitted")));
}

}  // namespace
}  // namespace fleetmark::engine

namespace fleetmark::engine {
namespace {

v1::MemoryPoint Point(uint32_t tasks, uint64_t kib_over_baseline, int64_t kernel_kib,
                      v1::CaseStatus status = v1::CASE_STATUS_OK) {
  v1::MemoryPoint p;
  p.set_tasks(tasks);
  p.set_status(status);
  if (status != v1::CASE_STATUS_OK) {
    p.set_message("skipped: needs 100000 more threads");
    return p;
  }
  p.set_baseline_rss_bytes(4 << 20);
  p.set_rss_bytes((4 << 20) + kib_over_baseline * 1024);
  p.set_kernel_stack_delta_bytes(kernel_kib * 1024);
  return p;
}

// S2's thread rows: the 100 000-thread point ran out of threads. The slope is the
// least-squares line of the three points that ran (known numbers: RSS = 20 + 12·N KiB,
// kernel stacks 16·N KiB, so 12, 16 and 28 KiB/task), the left-out point is named, and
// the case is still reported resource_exhausted.
TEST(MemoryFitTest, FitsThePointsThatRanAndNamesThoseLeftOut) {
  v1::CaseResult result;
  v1::MemoryResult* memory = result.mutable_memory();
  *memory->add_points() = Point(10, 20 + 12 * 10, 16 * 10);
  *memory->add_points() = Point(100, 20 + 12 * 100, 16 * 100);
  *memory->add_points() = Point(1000, 20 + 12 * 1000, 16 * 1000);
  *memory->add_points() = Point(100000, 0, 0, v1::CASE_STATUS_RESOURCE_EXHAUSTED);
  FitMemoryPoints(/*thread_per_task=*/true, memory, &result);
  EXPECT_EQ(result.status(), v1::CASE_STATUS_RESOURCE_EXHAUSTED);
  EXPECT_EQ(memory->points_fitted(), 3u);
  EXPECT_NEAR(memory->slope_kib_per_task(), 12, 1e-9);
  EXPECT_NEAR(memory->intercept_kib(), 20, 1e-6);
  EXPECT_NEAR(memory->r_squared(), 1, 1e-12);
  EXPECT_NEAR(memory->kernel_stack_slope_kib_per_task(), 16, 1e-9);
  EXPECT_NEAR(memory->total_slope_kib_per_task(), 28, 1e-9);
  ASSERT_EQ(memory->left_out_tasks_size(), 1);
  EXPECT_EQ(memory->left_out_tasks(0), 100000u);
  EXPECT_THAT(result.message(), HasSubstr("N=100000: skipped: needs 100000 more threads"));
  EXPECT_THAT(result.message(), HasSubstr("slope fitted on the 3 points that ran, without N=100000"));
}

// Every point ran: ok, nothing left out; one point that ran: no slope, the case keeps
// the left-out point's status.
TEST(MemoryFitTest, AllPointsOkAndTooFewPoints) {
  v1::CaseResult all;
  *all.mutable_memory()->add_points() = Point(10, 100, 0);
  *all.mutable_memory()->add_points() = Point(20, 200, 0);
  FitMemoryPoints(/*thread_per_task=*/false, all.mutable_memory(), &all);
  EXPECT_EQ(all.status(), v1::CASE_STATUS_OK);
  EXPECT_NEAR(all.memory().slope_kib_per_task(), 10, 1e-9);
  EXPECT_EQ(all.memory().left_out_tasks_size(), 0);
  EXPECT_THAT(all.message(), ::testing::Not(HasSubstr("without")));

  v1::CaseResult one;
  *one.mutable_memory()->add_points() = Point(10, 100, 0);
  *one.mutable_memory()->add_points() = Point(100000, 0, 0, v1::CASE_STATUS_RESOURCE_EXHAUSTED);
  FitMemoryPoints(/*thread_per_task=*/false, one.mutable_memory(), &one);
  EXPECT_EQ(one.status(), v1::CASE_STATUS_RESOURCE_EXHAUSTED);
  EXPECT_EQ(one.memory().points_fitted(), 0u);
  EXPECT_EQ(one.memory().slope_kib_per_task(), 0);
  ASSERT_EQ(one.memory().left_out_tasks_size(), 1);
}

}  // namespace
}  // namespace fleetmark::engine
