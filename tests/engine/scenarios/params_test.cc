#include "engine/scenarios/params.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetmark::engine {
namespace {

using ::testing::HasSubstr;

v1::CaseSpec Spec(const char* scenario, const char* strategy) {
  v1::CaseSpec spec;
  spec.set_scenario(scenario);
  spec.mutable_strategy()->set_name(strategy);
  return spec;
}

TEST(ParamsTest, MemoryDefaults) {
  absl::StatusOr<MemoryConfig> c = ResolveMemoryConfig(Spec("memory", "fiber"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->task_counts, (std::vector<uint32_t>{1, 10, 100, 1000, 10000}));
  EXPECT_EQ(c->max_memory_bytes, uint64_t{1024} << 20);
}

TEST(ParamsTest, MemoryRefusesOutOfRangeWithFieldName) {
  v1::CaseSpec spec = Spec("memory", "thread_per_task");
  spec.mutable_memory()->add_task_counts(10);
  spec.mutable_memory()->add_task_counts(2'000'000);
  absl::StatusOr<MemoryConfig> c = ResolveMemoryConfig(spec);
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("memory.task_counts[1]: 1 <= task_counts <= 1000000, got 2000000"));

  spec = Spec("memory", "thread_per_task");
  spec.mutable_strategy()->set_stack_kib(64);
  spec.mutable_memory()->set_touch_stack_kib(64);
  c = ResolveMemoryConfig(spec);
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("memory.touch_stack_kib"));

  spec = Spec("memory", "thread_per_task");
  spec.mutable_strategy()->set_stack_kib(4);
  EXPECT_THAT(ResolveMemoryConfig(spec).status().message(), HasSubstr("stack_kib"));
}

TEST(ParamsTest, FanoutDefaultsAndRanges) {
  absl::StatusOr<FanoutConfig> c = ResolveFanoutConfig(Spec("fanout", "fiber"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->requests, 1u);
  EXPECT_EQ(c->calls, 5u);
  EXPECT_EQ(c->delay, absl::Milliseconds(500));
  EXPECT_EQ(c->timeout, absl::Milliseconds(3000));

  v1::CaseSpec spec = Spec("fanout", "fiber");
  spec.mutable_fanout()->set_requests(100'001);
  EXPECT_THAT(ResolveFanoutConfig(spec).status().message(),
              HasSubstr("fanout.requests: 1 <= requests <= 100000, got 100001"));
  spec = Spec("fanout", "fiber");
  spec.mutable_fanout()->set_requests(100'000);
  spec.mutable_fanout()->set_calls_per_request(1000);
  EXPECT_THAT(ResolveFanoutConfig(spec).status().message(), HasSubstr("at most 10000000 calls"));
  spec = Spec("fanout", "fiber");
  spec.mutable_fanout()->set_delay_ms(60'001);
  EXPECT_THAT(ResolveFanoutConfig(spec).status().message(), HasSubstr("fanout.delay_ms"));
}

TEST(ParamsTest, LoadDefaultsPerServerModel) {
  absl::StatusOr<LoadConfig> pool = ResolveLoadConfig(Spec("load", "fixed_pool"));
  ASSERT_TRUE(pool.ok()) << pool.status();
  EXPECT_EQ(pool->users, 1000u);
  EXPECT_EQ(pool->server_threads, 100);
  EXPECT_EQ(pool->queue_capacity, 100);
  EXPECT_EQ(pool->objects, 1000u);
  absl::StatusOr<LoadConfig> loop = ResolveLoadConfig(Spec("load", "event_loop"));
  ASSERT_TRUE(loop.ok());
  EXPECT_GE(loop->server_threads, 1);

  v1::CaseSpec spec = Spec("load", "event_loop");
  spec.mutable_load()->set_users(100'001);
  EXPECT_THAT(ResolveLoadConfig(spec).status().message(), HasSubstr("load.users: 1 <= users <= 100000, got 100001"));
  spec = Spec("load", "event_loop");
  spec.mutable_load()->set_client_threads(65);
  EXPECT_THAT(ResolveLoadConfig(spec).status().message(), HasSubstr("load.client_threads"));
}

}  // namespace
}  // namespace fleetmark::engine
