#include "engine/runner/counters_merge.h"

#include "gtest/gtest.h"

namespace fleetmark::engine {
namespace {

TEST(MergeCountersTest, SumsMeansAndMaxima) {
  v1::Counters a, b, total;
  a.set_cpu_user_seconds(1.5);
  a.set_cpu_system_seconds(0.5);
  a.set_voluntary_context_switches(10);
  a.set_involuntary_context_switches(3);
  a.set_allocations(100);  // per repetition
  a.set_allocated_bytes(1000);
  a.set_peak_threads(5);
  a.set_rss_delta_bytes(4096);
  a.set_repetitions(10);
  a.set_peak_rss_bytes(1 << 20);
  a.set_peak_rss_reset(true);
  a.set_allocations_counted(true);
  b = a;
  b.set_allocations(200);
  b.set_allocated_bytes(4000);
  b.set_repetitions(30);
  b.set_peak_threads(9);
  b.set_peak_rss_reset(false);
  MergeCounters(a, total);
  MergeCounters(b, total);
  EXPECT_DOUBLE_EQ(total.cpu_user_seconds(), 3.0);
  EXPECT_DOUBLE_EQ(total.cpu_system_seconds(), 1.0);
  EXPECT_EQ(total.voluntary_context_switches(), 20);
  EXPECT_EQ(total.involuntary_context_switches(), 6);
  EXPECT_EQ(total.allocations(), 175u);       // (100·10 + 200·30) / 40
  EXPECT_EQ(total.allocated_bytes(), 3250u);  // (1000·10 + 4000·30) / 40
  EXPECT_EQ(total.peak_threads(), 9u);
  EXPECT_EQ(total.rss_delta_bytes(), 8192);
  EXPECT_EQ(total.repetitions(), 40u);
  EXPECT_FALSE(total.peak_rss_reset());
  EXPECT_TRUE(total.allocations_counted());
}

TEST(MergeCountersTest, EmptySliceChangesNothing) {
  v1::Counters total, empty;
  total.set_allocations(7);
  total.set_repetitions(2);
  empty.set_peak_threads(99);
  MergeCounters(empty, total);
  EXPECT_EQ(total.allocations(), 7u);
  EXPECT_EQ(total.peak_threads(), 0u);
}

}  // namespace
}  // namespace fleetmark::engine
