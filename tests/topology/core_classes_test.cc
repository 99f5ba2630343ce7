#include "engine/topology/core_classes.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetmark::engine::topology_internal {
namespace {

using ::testing::ElementsAre;

CoreTraits Core(CpuSet cpus, std::string uarch, uint64_t max_khz, uint32_t capacity = 0) {
  CoreTraits t;
  t.cpus = std::move(cpus);
  t.microarchitecture = std::move(uarch);
  t.max_khz = max_khz;
  t.capacity = capacity;
  return t;
}

std::vector<uint32_t> Cpus(const v1::CoreKind& kind) { return {kind.cpus().begin(), kind.cpus().end()}; }

TEST(CoreClassesTest, FavouredCoresStayWithTheirMicroarchitecture) {
  // Intel hybrid with Turbo Boost Max 3.0: two P-cores reach 5.2 GHz, the rest 5.0 GHz;
  // hwloc 2.9 may call these two kinds, fleetmark keeps one performance class.
  std::vector<CoreTraits> cores = {Core({0, 1}, "IntelCore", 5000000), Core({2, 3}, "IntelCore", 5200000),
                                   Core({4, 5}, "IntelCore", 5000000), Core({6}, "IntelAtom", 3900000),
                                   Core({7}, "IntelAtom", 3900000)};
  CoreClasses classes = GroupCoreClasses(cores);
  ASSERT_EQ(classes.classes.size(), 2u);
  EXPECT_EQ(classes.classes[0].name(), "performance");
  EXPECT_THAT(Cpus(classes.classes[0]), ElementsAre(0, 1, 2, 3, 4, 5));
  EXPECT_EQ(classes.classes[0].max_frequency_khz(), 5000000u);  // most cores' value
  EXPECT_EQ(classes.classes[0].threads_per_core(), 2u);
  EXPECT_EQ(classes.classes[0].cores(), 3u);
  EXPECT_EQ(classes.classes[1].name(), "efficiency");
  EXPECT_THAT(Cpus(classes.classes[1]), ElementsAre(6, 7));
  EXPECT_EQ(classes.classes[1].efficiency(), 0);
  EXPECT_THAT(classes.class_of_core, ElementsAre(0, 0, 0, 1, 1));
}

TEST(CoreClassesTest, ThreeArmClustersAreNamedByRank) {
  // Snapdragon 870-like: 1 prime A77 @3.2 GHz, 3 A77 @2.42 GHz, 4 A55 @1.8 GHz.
  std::vector<CoreTraits> cores;
  for (int cpu = 0; cpu < 4; ++cpu) cores.push_back(Core({cpu}, "Cortex-A55", 1804800, 448));
  for (int cpu = 4; cpu < 7; ++cpu) cores.push_back(Core({cpu}, "Cortex-A77", 2419200, 911));
  cores.push_back(Core({7}, "Cortex-A77", 3187200, 1024));
  CoreClasses classes = GroupCoreClasses(cores);
  ASSERT_EQ(classes.classes.size(), 3u);
  EXPECT_EQ(classes.classes[0].name(), "performance");
  EXPECT_THAT(Cpus(classes.classes[0]), ElementsAre(7));
  EXPECT_EQ(classes.classes[1].name(), "mid");
  EXPECT_THAT(Cpus(classes.classes[1]), ElementsAre(4, 5, 6));
  EXPECT_EQ(classes.classes[2].name(), "efficiency");
  EXPECT_THAT(Cpus(classes.classes[2]), ElementsAre(0, 1, 2, 3));
  EXPECT_EQ(classes.classes[2].microarchitecture(), "Cortex-A55");
}

TEST(CoreClassesTest, UnknownFrequencyTakesItsMicroarchitecturesMaximum) {
  std::vector<CoreTraits> cores = {Core({0}, "Cortex-A9", 800000), Core({1}, "Cortex-A9", 0)};
  CoreClasses classes = GroupCoreClasses(cores);
  ASSERT_EQ(classes.classes.size(), 1u);
  EXPECT_EQ(classes.classes[0].name(), "performance");
  EXPECT_EQ(classes.classes[0].cores(), 2u);
  EXPECT_THAT(classes.core_max_khz, ElementsAre(800000u, 800000u));
}

TEST(CoreClassesTest, NothingKnownGivesOneClass) {
  std::vector<CoreTraits> cores = {Core({0, 4}, "", 0), Core({1, 5}, "", 0)};
  CoreClasses classes = GroupCoreClasses(cores);
  ASSERT_EQ(classes.classes.size(), 1u);
  EXPECT_THAT(Cpus(classes.classes[0]), ElementsAre(0, 1, 4, 5));
  EXPECT_EQ(ClassName(1, 4), "mid1");
  EXPECT_EQ(ClassName(3, 4), "efficiency");
  EXPECT_TRUE(GroupCoreClasses({}).classes.empty());
}

}  // namespace
}  // namespace fleetmark::engine::topology_internal
