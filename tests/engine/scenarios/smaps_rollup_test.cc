#include "engine/scenarios/smaps_rollup.h"

#include "gtest/gtest.h"

namespace fleetmark::engine {
namespace {

TEST(SmapsRollupTest, ParsesKernelFormat) {
  constexpr char kText[] =
      "55d4c0a00000-7ffd5b7fe000 ---p 00000000 00:00 0                          [rollup]\n"
      "Rss:                4096 kB\n"
      "Pss:                2048 kB\n"
      "Pss_Anon:           1024 kB\n"
      "Shared_Clean:       1000 kB\n"
      "Private_Clean:       100 kB\n"
      "Private_Dirty:       900 kB\n"
      "Swap:                  0 kB\n";
  absl::StatusOr<MemoryFootprint> m = ParseSmapsRollup(kText);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->rss_bytes, 4096u * 1024);
  EXPECT_EQ(m->pss_bytes, 2048u * 1024);
  EXPECT_EQ(m->uss_bytes, 1000u * 1024);
  EXPECT_TRUE(m->has_rollup);
}

TEST(SmapsRollupTest, RefusesTextWithoutRss) {
  EXPECT_FALSE(ParseSmapsRollup("Pss: 12 kB\n").ok());
  EXPECT_FALSE(ParseSmapsRollup("").ok());
}

TEST(SmapsRollupTest, ReadsThisProcess) {
  absl::StatusOr<MemoryFootprint> m = ReadMemoryFootprint();
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_GT(m->rss_bytes, 100u * 1024);
  if (m->has_rollup) {
    EXPECT_LE(m->pss_bytes, m->rss_bytes);
    EXPECT_LE(m->uss_bytes, m->rss_bytes);
  }
}

}  // namespace
}  // namespace fleetmark::engine
