// work_stealing in a process that may use fewer CPUs than the machine has (taskset,
// cpusets, single-core boards): Start, a batch and Stop must all end. oneTBB 2021.8's
// finalize used to wait forever there (issue 10), so each attempt runs in a child
// process pinned with sched_setaffinity, under a hang guard that kills it.
#include <sched.h>

#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "engine/child/child.h"
#include "engine/strategies/strategy.h"
#include "engine/workloads/workload.h"
#include "gtest/gtest.h"

namespace fleetmark::engine {
namespace {

constexpr char kPinnedChildKind[] = "test.work_stealing_pinned";

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

// In the child: pins the whole process (before any thread starts) to the CPU named by
// the request, then starts, runs and stops work_stealing with 0 (default), 1 and 2
// threads. Returns "threads_used,threads_used,threads_used".
absl::StatusOr<std::string> RunPinned(std::string_view request) {
  const absl::string_view text(request.data(), request.size());
  int cpu = -1;
  if (!absl::SimpleAtoi(text, &cpu) || cpu < 0 || cpu >= CPU_SETSIZE) {
    return absl::InvalidArgumentError(absl::StrCat("bad cpu \"", text, "\""));
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof(set), &set) != 0) {
    return absl::InternalError(absl::StrCat("sched_setaffinity(cpu ", cpu, ") failed"));
  }
  absl::StatusOr<std::unique_ptr<Workload>> workload = MakeWorkload("arithmetic");
  if (!workload.ok()) return workload.status();
  std::string used;
  for (int threads : {0, 1, 2}) {
    absl::StatusOr<std::unique_ptr<Strategy>> strategy = MakeStrategy("work_stealing");
    if (!strategy.ok()) return strategy.status();
    StrategyOptions options;
    options.threads = threads;
    if (absl::Status s = (*strategy)->Start(options); !s.ok()) return s;
    if (absl::Status s = (*strategy)->RunBatch(**workload, 100, IoMode::kBlocking); !s.ok()) {
      return s;
    }
    (*strategy)->Stop();  // hung here before the fix
    absl::StrAppend(&used, used.empty() ? "" : ",", (*strategy)->threads_used());
  }
  return used;
}

const ChildHandlerRegistration kRegistration(kPinnedChildKind, &RunPinned);

TEST(WorkStealingAffinityTest, StartRunAndStopEndOnOneAllowedCpu) {
  std::vector<int> cpus = AllowedCpus();
  ASSERT_FALSE(cpus.empty());
  if (cpus.size() > 2) cpus.resize(2);  // `taskset -c 0` and `-c 1`, as in the report
  for (int cpu : cpus) {
    SCOPED_TRACE(absl::StrCat("pinned to cpu ", cpu));
    absl::StatusOr<std::string> used = RunInChild(kPinnedChildKind, absl::StrCat(cpu), {.timeout = kHangGuard});
    ASSERT_TRUE(used.ok()) << used.status();
    // Default threads = the one CPU the process may use; 1 and 2 as requested.
    EXPECT_EQ(*used, "1,1,2");
  }
}

}  // namespace
}  // namespace fleetmark::engine
