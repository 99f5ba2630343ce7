// Load scenario: every response the generator counts was counted by the server, for
// each server model; descriptor exhaustion is a result.
#include "engine/scenarios/load_scenario.h"
#include "engine/scenarios/load_server.h"
#include "engine/scenarios/scenario.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace fleetmark::engine {
namespace {

using ::testing::HasSubstr;

v1::CaseSpec LoadSpec(const char* strategy, const char* io_mode, uint32_t users) {
  v1::CaseSpec spec;
  spec.set_scenario("load");
  spec.set_io_mode(io_mode);
  spec.mutable_strategy()->set_name(strategy);
  v1::LoadParams* p = spec.mutable_load();
  p->set_users(users);
  p->set_ramp_seconds(1);
  p->set_hold_seconds(2);
  p->set_think_ms(50);
  p->set_objects(100);
  p->set_db_wait_us(2000);
  return spec;
}

v1::CaseResult RunCase(const v1::CaseSpec& spec) {
  absl::StatusOr<v1::CaseResult> result = RunScenarioCase(spec, {});
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *result : v1::CaseResult();
}

TEST(LoadScenarioTest, ServerCountEqualsClientCountForEveryModel) {
  struct Case {
    const char* strategy;
    const char* io_mode;
  };
  for (const Case& c : {Case{"event_loop", "suspending"}, Case{"coroutine", "suspending"}, Case{"fiber", "suspending"},
                        Case{"fixed_pool", "blocking"}}) {
    const v1::CaseResult r = RunCase(LoadSpec(c.strategy, c.io_mode, 40));
    ASSERT_EQ(r.status(), v1::CASE_STATUS_OK) << c.strategy << ": " << r.message();
    const v1::LoadResult& load = r.load();
    EXPECT_GT(load.requests(), 100u) << c.strategy;
    EXPECT_EQ(load.server_requests(), load.requests()) << c.strategy;
    EXPECT_EQ(load.errors_timeout() + load.errors_refused() + load.errors_other(), 0u) << c.strategy;
    EXPECT_GT(load.throughput_rps(), 10) << c.strategy;
    EXPECT_GE(load.latency_p99_ms(), load.latency_p50_ms());
    EXPECT_GE(load.latency_max_ms(), load.latency_p999_ms());
    EXPECT_GE(load.latency_p50_ms(), 2.0 * (1 - load.histogram_relative_error()))
        << "every response waits the 2 ms database read";
    EXPECT_GT(load.peak_rss_bytes(), 0u);
    EXPECT_GT(load.response_bytes(), 1000u);
  }
}

TEST(LoadScenarioTest, FullQueueAnswers503AndCountsStillMatch) {
  v1::CaseSpec spec = LoadSpec("fixed_pool", "blocking", 60);
  spec.mutable_strategy()->set_threads(1);
  spec.mutable_strategy()->set_limit(1);
  spec.mutable_load()->set_think_ms(1);
  spec.mutable_load()->set_db_wait_us(20'000);
  const v1::CaseResult r = RunCase(spec);
  ASSERT_EQ(r.status(), v1::CASE_STATUS_OK) << r.message();
  EXPECT_GT(r.load().errors_5xx(), 0u);
  EXPECT_EQ(r.load().server_requests(), r.load().requests());
}

TEST(LoadScenarioTest, TooManyUsersForDescriptorsIsResourceExhausted) {
  const v1::CaseResult r = RunCase(LoadSpec("event_loop", "suspending", 100'000));
  EXPECT_EQ(r.status(), v1::CASE_STATUS_RESOURCE_EXHAUSTED);
  EXPECT_THAT(r.message(), HasSubstr("load.users"));
}

TEST(LoadScenarioTest, SuspendingPoolIsUnsupported) {
  const v1::CaseResult r = RunCase(LoadSpec("fixed_pool", "suspending", 1));
  EXPECT_EQ(r.status(), v1::CASE_STATUS_UNSUPPORTED);
}

TEST(LoadScenarioTest, ResponseBodyIsAJsonArrayOfKObjects) {
  const nlohmann::json body = nlohmann::json::parse(BuildLoadResponseBody(250));
  ASSERT_TRUE(body.is_array());
  EXPECT_EQ(body.size(), 250u);
  EXPECT_EQ(body[249]["id"], 249);
}

}  // namespace
}  // namespace fleetmark::engine
