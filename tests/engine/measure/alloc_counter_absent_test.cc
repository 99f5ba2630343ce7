// A binary that does not link fleetmark_alloc_counter: the counter reports itself
// inactive, and counters say allocations were not counted (rather than 0).
#include "engine/measure/alloc_counter.h"
#include "engine/measure/counter_collector.h"
#include "gtest/gtest.h"

namespace fleetmark::engine {
namespace {

TEST(AllocCounterAbsentTest, InactiveAndNotCounted) {
  EXPECT_FALSE(AllocationCounterActive());
  const AllocationCounts before = ReadAllocationCounts();
  int* p = new int(5);
  EXPECT_EQ(*p, 5);
  delete p;
  EXPECT_EQ(ReadAllocationCounts().allocations, before.allocations);

  CounterCollector collector(CounterOptions{.sample_threads = false});
  ASSERT_TRUE(collector.Begin().ok());
  const absl::StatusOr<v1::Counters> c = collector.End(1);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(c->allocations_counted());
  EXPECT_EQ(c->allocations(), 0u);
}

}  // namespace
}  // namespace fleetmark::engine
