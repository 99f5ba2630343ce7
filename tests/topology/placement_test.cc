#include "engine/topology/placement.h"

#include <sched.h>

#include <thread>
#include <vector>

#include "engine/topology/host.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/topology/fixtures.h"

namespace fleetmark::engine {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

v1::HostInfo Fixture(const char* name) {
  absl::StatusOr<v1::HostInfo> host = DetectHost({.fsroot = testing::FixtureRoot(name)});
  EXPECT_TRUE(host.ok()) << host.status();
  return host.ok() ? *host : v1::HostInfo{};
}

absl::StatusOr<CpuSet> Plan(const std::string& placement, const v1::HostInfo& host, int threads) {
  absl::StatusOr<PlacementSpec> spec = ParsePlacement(placement);
  if (!spec.ok()) return spec.status();
  return PlanPlacement(*spec, host, threads);
}

TEST(PlanPlacementTest, HybridFixturePicksTheRightCpus) {
  const v1::HostInfo host = Fixture("20em64t-hybrid-1p6c2t+2ca4co1t");
  EXPECT_THAT(*Plan("any", host, 4), IsEmpty());
  EXPECT_THAT(*Plan("class:performance", host, 4), ElementsAre(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11));
  EXPECT_THAT(*Plan("class:efficiency", host, 4), ElementsAre(12, 13, 14, 15, 16, 17, 18, 19));
  // One hardware thread of each of the 6 P-cores and 8 E-cores.
  EXPECT_THAT(*Plan("one_per_core", host, 4), ElementsAre(0, 2, 4, 6, 8, 10, 12, 13, 14, 15, 16, 17, 18, 19));
  // Both siblings of as few cores as possible: 4 threads -> 2 cores, 3 -> 2, 1 -> 1.
  EXPECT_THAT(*Plan("smt_pairs", host, 4), ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(*Plan("smt_pairs", host, 3), ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(*Plan("smt_pairs", host, 1), ElementsAre(0, 1));
  EXPECT_THAT(*Plan("smt_pairs", host, 0), ElementsAre(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11));
  EXPECT_THAT(*Plan("cpus:0,2-3", host, 4), ElementsAre(0, 2, 3));
  EXPECT_EQ(Plan("class:mid", host, 4).status().code(), absl::StatusCode::kUnimplemented);
}

TEST(PlanPlacementTest, FourSocketFixtureUsesRealSiblings) {
  const v1::HostInfo host = Fixture("16em64t-4s2c2t");
  EXPECT_THAT(*Plan("one_per_core", host, 0), ElementsAre(0, 1, 2, 3, 4, 5, 6, 7));
  EXPECT_THAT(*Plan("smt_pairs", host, 2), ElementsAre(0, 8));
  EXPECT_THAT(*Plan("smt_pairs", host, 4), ElementsAre(0, 1, 8, 9));
}

TEST(PlanPlacementTest, ImpossiblePlacementsAreUnsupported) {
  const v1::HostInfo four_socket = Fixture("16em64t-4s2c2t");
  absl::StatusOr<CpuSet> efficiency = Plan("class:efficiency", four_socket, 4);
  EXPECT_EQ(efficiency.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(IsPlacementUnsupported(efficiency.status()));
  EXPECT_THAT(std::string(efficiency.status().message()), HasSubstr("no efficiency cores"));

  absl::StatusOr<CpuSet> cpu999 = Plan("cpus:999", four_socket, 4);
  EXPECT_TRUE(IsPlacementUnsupported(cpu999.status())) << cpu999.status();
  EXPECT_THAT(std::string(cpu999.status().message()), HasSubstr("999"));

  const v1::HostInfo arm = Fixture("2arm-2c");
  absl::StatusOr<CpuSet> pairs = Plan("smt_pairs", arm, 2);
  EXPECT_TRUE(IsPlacementUnsupported(pairs.status())) << pairs.status();
  EXPECT_FALSE(IsPlacementUnsupported(absl::InvalidArgumentError("bad plan")));
  EXPECT_FALSE(IsPlacementUnsupported(absl::FailedPreconditionError("other")));
  EXPECT_FALSE(IsPlacementUnsupported(absl::OkStatus()));
}

// Every placement lies within the CPUs the process may use (issue 32, item 8: under
// `taskset -c 1`, class:performance ran on 0-1 and cpus:0 on 0, both ok): the hybrid
// machine allowed 1-3 and 13 (an affinity mask in the recorded tree).
TEST(PlanPlacementTest, EveryPlacementIsInsideTheAllowedCpus) {
  const std::string root = testing::CopyFixture("20em64t-hybrid-1p6c2t+2ca4co1t", "placement-allowed");
  ASSERT_FALSE(root.empty());
  testing::WriteTreeFile(root, "/proc/self/status", "Cpus_allowed_list:\t1-3,13\n");
  absl::StatusOr<v1::HostInfo> host = DetectHost({.fsroot = root});
  ASSERT_TRUE(host.ok()) << host.status();
  EXPECT_THAT(*Plan("class:performance", *host, 4), ElementsAre(1, 2, 3));
  EXPECT_THAT(*Plan("class:efficiency", *host, 4), ElementsAre(13));
  EXPECT_THAT(*Plan("one_per_core", *host, 4), ElementsAre(1, 2, 13));  // cores 0-1, 2-3, 13
  EXPECT_THAT(*Plan("smt_pairs", *host, 4), ElementsAre(2, 3));         // the one core with both allowed
  EXPECT_THAT(*Plan("cpus:2-3", *host, 4), ElementsAre(2, 3));
  absl::StatusOr<CpuSet> cpu0 = Plan("cpus:0", *host, 4);
  EXPECT_TRUE(IsPlacementUnsupported(cpu0.status())) << cpu0.status();
  EXPECT_THAT(std::string(cpu0.status().message()),
              HasSubstr("CPU 0 is not among the CPUs this process may use (affinity/cgroup cpuset): 1-3,13"));

  // A host recorded before the limits were listed keeps the host's CPUs.
  v1::HostInfo old = *host;
  old.mutable_limits()->clear_allowed_cpu_ids();
  EXPECT_THAT(*Plan("cpus:0", old, 4), ElementsAre(0));

  // Allowed only 1 and 13: no core has two allowed threads.
  v1::HostInfo one_each = *host;
  one_each.mutable_limits()->clear_allowed_cpu_ids();
  one_each.mutable_limits()->add_allowed_cpu_ids(1);
  one_each.mutable_limits()->add_allowed_cpu_ids(13);
  absl::StatusOr<CpuSet> pairs = Plan("smt_pairs", one_each, 2);
  EXPECT_TRUE(IsPlacementUnsupported(pairs.status())) << pairs.status();
  EXPECT_THAT(std::string(pairs.status().message()), HasSubstr("no core has 2 or more hardware threads among"));
  EXPECT_THAT(*Plan("class:performance", one_each, 2), ElementsAre(1));
}

// Runs `threads` threads the way a strategy does: on_thread_start first, then tasks
// each calling on_task_start.
void RunLikeAStrategy(const StrategyOptions& options, int threads, int tasks_per_thread) {
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&options, t, tasks_per_thread] {
      if (options.on_thread_start) options.on_thread_start();
      for (int i = 0; i < tasks_per_thread; ++i) {
        if (options.on_task_start) options.on_task_start(t * tasks_per_thread + i);
        volatile double x = 1;
        for (int k = 0; k < 2000; ++k) x = x * 1.0000001;
        if (i % 16 == 0) std::this_thread::yield();
      }
    });
  }
  for (std::thread& w : workers) w.join();
}

TEST(PlacementHooksTest, Cpu0PlacementRunsEveryTaskOnCpu0) {
  absl::StatusOr<v1::HostInfo> host = DetectHost();
  ASSERT_TRUE(host.ok()) << host.status();
  absl::StatusOr<CpuSet> cpus = Plan("cpus:0", *host, 4);
  ASSERT_TRUE(cpus.ok()) << cpus.status();

  PlacementHooks hooks(*cpus);
  StrategyOptions options;
  options.threads = 4;
  hooks.Install(options);
  RunLikeAStrategy(options, 4, 200);
  ASSERT_TRUE(hooks.status().ok()) << hooks.status();
  EXPECT_EQ(hooks.threads_pinned(), 4);
  EXPECT_THAT(hooks.CpusSeen(), ElementsAre(0));

  hooks.ResetSeen();
  EXPECT_THAT(hooks.CpusSeen(), IsEmpty());
}

TEST(PlacementHooksTest, InstallKeepsExistingHooks) {
  std::atomic<int> thread_starts{0};
  std::atomic<int> task_starts{0};
  StrategyOptions options;
  options.on_thread_start = [&] { thread_starts.fetch_add(1); };
  options.on_task_start = [&](int) { task_starts.fetch_add(1); };
  PlacementHooks hooks(CpuSet{});  // `any`
  hooks.Install(options);
  RunLikeAStrategy(options, 2, 10);
  EXPECT_EQ(thread_starts.load(), 2);
  EXPECT_EQ(task_starts.load(), 20);
  EXPECT_EQ(hooks.threads_pinned(), 0);
  EXPECT_THAT(hooks.CpusSeen(), IsEmpty());  // `any` samples no task (below)
  EXPECT_TRUE(hooks.status().ok());
}

// Issue 13, item 5: placement `any` verifies nothing, so it adds no per-task hook (its
// sched_getcpu and atomic OR sat inside every timed task); it keeps the thread-start
// hook, which undoes stale pins (next test).
TEST(PlacementHooksTest, AnyInstallsNoPerTaskHook) {
  StrategyOptions options;
  PlacementHooks any(CpuSet{});
  any.Install(options);
  EXPECT_TRUE(static_cast<bool>(options.on_thread_start));
  EXPECT_FALSE(static_cast<bool>(options.on_task_start));
  RunLikeAStrategy(options, 2, 10);
  EXPECT_THAT(any.CpusSeen(), IsEmpty());
  EXPECT_TRUE(any.status().ok());
}

TEST(PlacementHooksTest, AnyUndoesAPinLeftOnAReusedThread) {
  cpu_set_t initial;
  ASSERT_EQ(sched_getaffinity(0, sizeof(initial), &initial), 0);
  std::thread reused([&] {
    PlacementHooks pinned(CpuSet{0});
    pinned.OnThreadStart();  // an earlier `cpus:0` case pins this worker ...
    ASSERT_TRUE(pinned.status().ok()) << pinned.status();
    PlacementHooks any(CpuSet{});
    any.OnThreadStart();  // ... a later `any` case must not inherit the pin
    cpu_set_t now;
    ASSERT_EQ(sched_getaffinity(0, sizeof(now), &now), 0);
    EXPECT_TRUE(CPU_EQUAL(&initial, &now));
  });
  reused.join();
}

TEST(PlacementHooksTest, RefusedAffinityIsRecordedAsUnsupported) {
  // CPU 1000 does not exist here: sched_setaffinity fails with EINVAL, as it does on
  // Android builds that refuse affinity (EPERM); the case must not run unpinned silently.
  PlacementHooks hooks(CpuSet{1000});
  StrategyOptions options;
  hooks.Install(options);
  RunLikeAStrategy(options, 2, 5);
  EXPECT_EQ(hooks.threads_pinned(), 0);
  EXPECT_TRUE(IsPlacementUnsupported(hooks.status())) << hooks.status();
  EXPECT_THAT(std::string(hooks.status().message()), HasSubstr("1000"));
}

TEST(ScopedThreadAffinityTest, PinsAndRestoresTheCaller) {
  cpu_set_t before;
  ASSERT_EQ(sched_getaffinity(0, sizeof(before), &before), 0);
  {
    ScopedThreadAffinity pin(CpuSet{0});
    ASSERT_TRUE(pin.status().ok()) << pin.status();
    std::this_thread::yield();
    EXPECT_EQ(sched_getcpu(), 0);
  }
  cpu_set_t after;
  ASSERT_EQ(sched_getaffinity(0, sizeof(after), &after), 0);
  EXPECT_TRUE(CPU_EQUAL(&before, &after));
}

}  // namespace
}  // namespace fleetmark::engine
