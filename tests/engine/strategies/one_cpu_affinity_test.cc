// The strategies whose runtime sizes itself from the machine (oneTBB: work_stealing and
// std_par; libgomp: the openmp_* strategies) in a process that may use fewer CPUs than
// the machine has (taskset, cpusets, single-core boards): Start, a batch and Stop must
// all end, and the default thread count must be the CPUs the process may use. oneTBB
// 2021.8's finalize used to wait forever there (issue 10), so each attempt runs in a
// child process pinned with sched_setaffinity, under a hang guard that kills it. Also
// here, because it needs a child process started with a given environment: OpenMP
// giving fewer threads than asked (OMP_THREAD_LIMIT) is what threads_used reports.
#include <sched.h>
#include <stdlib.h>

#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "engine/child/child.h"
#include "engine/strategies/strategy.h"
#include "engine/workloads/workload.h"
#include "gtest/gtest.h"

namespace fleetmark::engine {
namespace {

constexpr char kPinnedChildKind[] = "test.strategy_pinned";
constexpr char kThreadsChildKind[] = "test.strategy_threads";

// Far above the second this takes; only a hang reaches it.
constexpr absl::Duration kHangGuard = absl::Seconds(60);

std::vector<int> AllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

// Starts, runs 100 tasks of `workload` and stops `name` with each of `threads`;
// returns the threads_used values joined by ",".
absl::StatusOr<std::string> ThreadsUsed(std::string_view name, std::vector<int> threads_list) {
  absl::StatusOr<std::unique_ptr<Workload>> workload = MakeWorkload("arithmetic");
  if (!workload.ok()) return workload.status();
  std::string used;
  for (int threads : threads_list) {
    absl::StatusOr<std::unique_ptr<Strategy>> strategy = MakeStrategy(name);
    if (!strategy.ok()) return strategy.status();
    StrategyOptions options;
    options.threads = threads;
    if (absl::Status s = (*strategy)->Start(options); !s.ok()) return s;
    if (absl::Status s = (*strategy)->RunBatch(**workload, 100, IoMode::kBlocking); !s.ok()) {
      return s;
    }
    (*strategy)->Stop();  // work_stealing hung here before the fix
    absl::StrAppend(&used, used.empty() ? "" : ",", (*strategy)->threads_used());
  }
  return used;
}

// In the child: request "<cpu> <strategy>". Pins the whole process (before any thread
// starts) to the CPU, then runs the strategy with 0 (default), 1 and 2 threads.
absl::StatusOr<std::string> RunPinned(std::string_view request) {
  const std::vector<std::string> parts = absl::StrSplit(absl::string_view(request.data(), request.size()), ' ');
  int cpu = -1;
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &cpu) || cpu < 0 || cpu >= CPU_SETSIZE) {
    return absl::InvalidArgumentError(absl::StrCat("bad request \"", std::string(request), "\""));
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof(set), &set) != 0) {
    return absl::InternalError(absl::StrCat("sched_setaffinity(cpu ", cpu, ") failed"));
  }
  return ThreadsUsed(parts[1], {0, 1, 2});
}

// In the child (started with OMP_THREAD_LIMIT=2): request "<strategy>", run with 4
// threads.
absl::StatusOr<std::string> RunWithThreadLimit(std::string_view request) { return ThreadsUsed(request, {4}); }

const ChildHandlerRegistration kPinned(kPinnedChildKind, &RunPinned);
const ChildHandlerRegistration kThreads(kThreadsChildKind, &RunWithThreadLimit);

class OneCpuAffinityTest : public ::testing::TestWithParam<std::string_view> {};

TEST_P(OneCpuAffinityTest, StartRunAndStopEndOnOneAllowedCpu) {
  std::vector<int> cpus = AllowedCpus();
  ASSERT_FALSE(cpus.empty());
  if (cpus.size() > 2) cpus.resize(2);  // `taskset -c 0` and `-c 1`, as in the report
  for (int cpu : cpus) {
    SCOPED_TRACE(absl::StrCat("pinned to cpu ", cpu));
    absl::StatusOr<std::string> used =
        RunInChild(kPinnedChildKind, absl::StrCat(cpu, " ", std::string(GetParam())), {.timeout = kHangGuard});
    ASSERT_TRUE(used.ok()) << used.status();
    // Default threads = the one CPU the process may use; 1 and 2 as requested.
    EXPECT_EQ(*used, "1,1,2");
  }
}

INSTANTIATE_TEST_SUITE_P(SelfSizingRuntimes, OneCpuAffinityTest,
                         ::testing::Values("work_stealing", "std_par", "openmp_for", "openmp_for_dynamic",
                                           "openmp_for_guided", "openmp_task"),
                         [](const auto& info) { return std::string(info.param); });

// OpenMP may give a team fewer threads than num_threads asks (here OMP_THREAD_LIMIT=2,
// which libgomp reads when it loads in the child): threads_used is what the team had.
TEST(OpenMpThreadsUsedTest, ReportsTheTeamOpenMpGaveNotTheThreadsAsked) {
#if !defined(FLEETMARK_HAVE_OPENMP)
  GTEST_SKIP() << "built without OpenMP (the strategies report unsupported; strategy_test checks that)";
#endif
  ASSERT_EQ(setenv("OMP_THREAD_LIMIT", "2", 1), 0);
  for (std::string_view name : {"openmp_for", "openmp_task"}) {
    absl::StatusOr<std::string> used = RunInChild(kThreadsChildKind, name, {.timeout = kHangGuard});
    ASSERT_TRUE(used.ok()) << name << ": " << used.status();
    EXPECT_EQ(*used, "2") << name << " asked for 4 threads under OMP_THREAD_LIMIT=2";
  }
  unsetenv("OMP_THREAD_LIMIT");
}

}  // namespace
}  // namespace fleetmark::engine
