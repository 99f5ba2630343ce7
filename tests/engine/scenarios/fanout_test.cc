// Fanout scenario: suspending waits overlap, blocking waits serialise on the carriers
// (generous order-of-magnitude bounds: the machine is shared), timeouts are seeded.
#include "engine/scenarios/fanout_scenario.h"
#include "engine/scenarios/scenario.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetmark::engine {
namespace {

using ::testing::HasSubstr;

constexpr uint32_t kDelayMs = 200;

v1::CaseSpec FanoutSpec(const char* strategy, const char* io_mode, uint32_t threads, uint32_t requests,
                        uint32_t calls) {
  v1::CaseSpec spec;
  spec.set_scenario("fanout");
  spec.set_io_mode(io_mode);
  spec.mutable_strategy()->set_name(strategy);
  spec.mutable_strategy()->set_threads(threads);
  spec.mutable_fanout()->set_requests(requests);
  spec.mutable_fanout()->set_calls_per_request(calls);
  spec.mutable_fanout()->set_delay_ms(kDelayMs);
  return spec;
}

v1::CaseResult RunCase(const v1::CaseSpec& spec) {
  absl::StatusOr<v1::CaseResult> result = RunScenarioCase(spec, {});
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *result : v1::CaseResult();
}

// D calls with suspending waits on ONE thread finish in about one delay.
TEST(FanoutScenarioTest, SuspendingOnOneThreadTakesAboutOneDelay) {
  for (const char* strategy : {"coroutine", "fiber", "event_loop"}) {
    const v1::CaseResult r = RunCase(FanoutSpec(strategy, "suspending", 1, 1, 20));
    ASSERT_EQ(r.status(), v1::CASE_STATUS_OK) << strategy << ": " << r.message();
    EXPECT_EQ(r.fanout().successes(), 1u);
    EXPECT_EQ(r.fanout().calls(), 20u);
    EXPECT_GE(r.fanout().total_ms(), kDelayMs * 0.95) << strategy;
    EXPECT_LT(r.fanout().total_ms(), kDelayMs * 5) << strategy << " (20 sequential delays = 4000 ms)";
  }
}

// Blocking waits on k threads take ceil(D/k) delays.
TEST(FanoutScenarioTest, BlockingOnKThreadsTakesCeilDOverKDelays) {
  struct Case {
    const char* strategy;
    uint32_t k, d;
  };
  for (const Case& c : {Case{"fixed_pool", 2, 6}, Case{"coroutine", 2, 6}, Case{"work_stealing", 2, 6}}) {
    const v1::CaseResult r = RunCase(FanoutSpec(c.strategy, "blocking", c.k, 1, c.d));
    ASSERT_EQ(r.status(), v1::CASE_STATUS_OK) << c.strategy << ": " << r.message();
    const double expected = kDelayMs * ((c.d + c.k - 1) / c.k);  // 3 delays
    EXPECT_GE(r.fanout().total_ms(), expected * 0.95) << c.strategy;
    EXPECT_LT(r.fanout().total_ms(), expected * 3) << c.strategy;
  }
}

TEST(FanoutScenarioTest, SequentialTakesDDelaysAndPoolSizedDOne) {
  const v1::CaseResult seq = RunCase(FanoutSpec("direct", "blocking", 0, 2, 4));
  ASSERT_EQ(seq.status(), v1::CASE_STATUS_OK) << seq.message();
  EXPECT_GE(seq.fanout().total_ms(), 4 * kDelayMs * 0.95);
  EXPECT_EQ(seq.fanout().successes(), 2u);
  const v1::CaseResult pool = RunCase(FanoutSpec("fixed_pool", "blocking", 0, 2, 4));
  ASSERT_EQ(pool.status(), v1::CASE_STATUS_OK) << pool.message();
  EXPECT_LT(pool.fanout().total_ms(), 3 * kDelayMs);
  EXPECT_THAT(pool.fanout().executor(), HasSubstr("pool of D = 4"));
  EXPECT_GE(pool.fanout().peak_threads(), 2u * (1 + 4));
}

TEST(FanoutScenarioTest, RandomDelaysAndTimeoutsAreReproducible) {
  v1::CaseSpec spec = FanoutSpec("coroutine", "suspending", 1, 20, 5);
  spec.mutable_fanout()->set_random_delay(true);
  spec.mutable_fanout()->set_seed(7);
  spec.mutable_fanout()->set_delay_ms(400);
  spec.mutable_fanout()->set_timeout_ms(300);
  const v1::CaseResult a = RunCase(spec), b = RunCase(spec);
  ASSERT_EQ(a.status(), v1::CASE_STATUS_OK) << a.message();
  // P(call delay > 300 of [0, 400]) = 1/4, so most 5-call requests time out.
  EXPECT_GT(a.fanout().timeouts(), 0u);
  EXPECT_GT(a.fanout().call_timeouts(), 0u);
  EXPECT_EQ(a.fanout().successes() + a.fanout().timeouts() + a.fanout().failures(), 20u);
  EXPECT_EQ(a.fanout().call_timeouts(), b.fanout().call_timeouts());
  EXPECT_EQ(a.fanout().timeouts(), b.fanout().timeouts());
  EXPECT_LT(a.fanout().latency_max_ms(), 2000);
}

TEST(FanoutScenarioTest, DelayFunctionIsSeededAndBounded) {
  FanoutConfig config;
  config.delay = absl::Milliseconds(500);
  EXPECT_EQ(FanoutCallDelay(config, 3, 4), absl::Milliseconds(500));
  config.random_delay = true;
  config.seed = 1;
  bool differs = false;
  for (uint32_t j = 0; j < 100; ++j) {
    const absl::Duration d = FanoutCallDelay(config, 0, j);
    EXPECT_GE(d, absl::ZeroDuration());
    EXPECT_LE(d, config.delay);
    EXPECT_EQ(d, FanoutCallDelay(config, 0, j));
    differs |= d != FanoutCallDelay(config, 0, 0);
  }
  EXPECT_TRUE(differs);
}

TEST(FanoutScenarioTest, ThreadStrategiesRefuseSuspending) {
  const v1::CaseResult r = RunCase(FanoutSpec("thread_per_task", "suspending", 0, 1, 2));
  EXPECT_EQ(r.status(), v1::CASE_STATUS_UNSUPPORTED);
  EXPECT_THAT(r.message(), HasSubstr("no suspending wait"));
}

TEST(FanoutScenarioTest, ImpossibleThreadCountIsResourceExhausted) {
  // 100 000 requests x (1 + 99) threads each exceeds threads-max / max_map_count here.
  const v1::CaseResult r = RunCase(FanoutSpec("thread_per_task", "blocking", 0, 100'000, 99));
  EXPECT_EQ(r.status(), v1::CASE_STATUS_RESOURCE_EXHAUSTED);
  EXPECT_THAT(r.message(), HasSubstr("threads"));
}

}  // namespace
}  // namespace fleetmark::engine
