// Placement end to end on the live machine: every strategy, pinned to CPU 0 through
// PlacementHooks (and `direct` through ScopedThreadAffinity, as the runner does), runs
// all of its tasks on CPU 0.
#include <memory>
#include <string>

#include "engine/common/registry.h"
#include "engine/strategies/registry.h"
#include "engine/strategies/strategy.h"
#include "engine/topology/host.h"
#include "engine/topology/placement.h"
#include "engine/workloads/workload.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetmark::engine {
namespace {

using ::testing::ElementsAre;

class StrategyPlacementTest : public ::testing::TestWithParam<std::string> {};

TEST_P(StrategyPlacementTest, Cpu0CaseRunsEveryTaskOnCpu0) {
  absl::StatusOr<v1::HostInfo> host = DetectHost();
  ASSERT_TRUE(host.ok()) << host.status();
  absl::StatusOr<PlacementSpec> spec = ParsePlacement("cpus:0");
  ASSERT_TRUE(spec.ok());
  absl::StatusOr<CpuSet> cpus = PlanPlacement(*spec, *host, 3);
  ASSERT_TRUE(cpus.ok()) << cpus.status();

  absl::StatusOr<std::unique_ptr<Workload>> workload = MakeWorkload("collections");
  ASSERT_TRUE(workload.ok()) << workload.status();
  absl::StatusOr<std::unique_ptr<Strategy>> strategy = MakeStrategy(GetParam());
  ASSERT_TRUE(strategy.ok()) << strategy.status();

  PlacementHooks hooks(*cpus);
  StrategyOptions options;
  options.threads = 3;
  hooks.Install(options);
  std::optional<ScopedThreadAffinity> caller;
  if (GetParam() == "direct") {
    caller.emplace(*cpus);
    ASSERT_TRUE(caller->status().ok()) << caller->status();
  }
  ASSERT_TRUE((*strategy)->Start(options).ok());
  for (int round = 0; round < 3; ++round) {
    absl::Status status = (*strategy)->RunBatch(**workload, 60, IoMode::kBlocking);
    ASSERT_TRUE(status.ok()) << status;
  }
  (*strategy)->Stop();
  EXPECT_TRUE(hooks.status().ok()) << hooks.status();
  EXPECT_THAT(hooks.CpusSeen(), ElementsAre(0)) << GetParam();
}

std::vector<std::string> AllStrategies() {
  std::vector<std::string> names;
  for (const auto& s : kStrategies) names.emplace_back(s.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(AllStrategies, StrategyPlacementTest, ::testing::ValuesIn(AllStrategies()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace fleetmark::engine
