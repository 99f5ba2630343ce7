#include "engine/topology/placement_spec.h"

#include "engine/topology/sysfs.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetmark::engine {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ParsePlacementTest, AcceptsEveryForm) {
  auto any = ParsePlacement("");
  ASSERT_TRUE(any.ok()) << any.status();
  EXPECT_EQ(any->kind, PlacementKind::kAny);
  EXPECT_EQ(any->text, "any");
  EXPECT_EQ(ParsePlacement(" any ")->kind, PlacementKind::kAny);
  EXPECT_EQ(ParsePlacement("one_per_core")->kind, PlacementKind::kOnePerCore);
  EXPECT_EQ(ParsePlacement("smt_pairs")->kind, PlacementKind::kSmtPairs);

  auto cls = ParsePlacement("class:efficiency");
  ASSERT_TRUE(cls.ok()) << cls.status();
  EXPECT_EQ(cls->kind, PlacementKind::kClass);
  EXPECT_EQ(cls->class_name, "efficiency");
  EXPECT_TRUE(ParsePlacement("class:mid").ok());
  EXPECT_TRUE(ParsePlacement("class:mid2").ok());

  auto cpus = ParsePlacement("cpus:3,0,2-3");
  ASSERT_TRUE(cpus.ok()) << cpus.status();
  EXPECT_EQ(cpus->kind, PlacementKind::kCpus);
  EXPECT_THAT(cpus->cpus, ElementsAre(0, 2, 3));
  EXPECT_EQ(cpus->text, "cpus:0,2-3");
}

TEST(ParsePlacementTest, RejectsBadInputNamingTheValue) {
  for (const char* bad : {"kind:performance", "class:", "class:big", "class:mid-1", "cpus:", "cpus:a", "cpus:3-1",
                          "cpus:1024", "cpus:-1", "cpus:1,,2", "one_per_core ,", "ANY"}) {
    auto spec = ParsePlacement(bad);
    EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_THAT(std::string(ParsePlacement("class:big").status().message()), HasSubstr("performance, mid, efficiency"));
  EXPECT_THAT(std::string(ParsePlacement("cpus:1024").status().message()), HasSubstr("1024"));
  EXPECT_THAT(std::string(ParsePlacement("fast").status().message()), HasSubstr("one_per_core"));
}

TEST(CpuListTest, RoundTrips) {
  auto cpus = ParseCpuList("0-2,5,7-8\n");
  ASSERT_TRUE(cpus.ok()) << cpus.status();
  EXPECT_THAT(*cpus, ElementsAre(0, 1, 2, 5, 7, 8));
  EXPECT_EQ(FormatCpuList(*cpus), "0-2,5,7-8");
  EXPECT_EQ(FormatCpuList({}), "");
  EXPECT_EQ(FormatCpuList({4}), "4");
  EXPECT_FALSE(ParseCpuList("").ok());
  EXPECT_FALSE(ParseCpuList("1-").ok());
}

TEST(CpuMaskTest, ParsesSysfsMasks) {
  auto cpus = topology_internal::ParseCpuMask("00000000,00000101");
  ASSERT_TRUE(cpus.ok());
  EXPECT_THAT(*cpus, ElementsAre(0, 8));
  auto high = topology_internal::ParseCpuMask("1,00000000\n");
  ASSERT_TRUE(high.ok());
  EXPECT_THAT(*high, ElementsAre(32));
  EXPECT_FALSE(topology_internal::ParseCpuMask("0x1g").ok());
}

}  // namespace
}  // namespace fleetmark::engine
