// The strategy map on synthetic results with known answers: winners, ties (overlapping
// CIs, results without a CI), ratios with their intervals, and crossovers along one
// and two swept parameters.
#include "engine/report/strategy_map.h"

#include <cmath>
#include <limits>

#include "engine/report/csv.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/engine/report/sweep_results.h"

namespace fleetmark::report {
namespace {

using ::testing::HasSubstr;

// A result of `label` at a sweep point (sweep_results.h).
v1::CaseResult Result(const std::string& label, uint32_t wait, double median, double half, uint32_t cpu = 1000,
                      bool two = false) {
  return testing::SweepResult(label, wait, median, half, cpu, two);
}

TEST(StrategyMapTest, WinnerRunnerUpRatioAndTies) {
  std::vector<v1::CaseResult> results = {// wait 10: cpu clearly wins, 2x with CI [1.8/1.1, 2.2/0.9].
                                         Result("cpu", 10, 1.0e6, 0.1e6), Result("io", 10, 2.0e6, 0.2e6),
                                         // wait 100: overlapping CIs -> a tie, although cpu's median is lower.
                                         Result("cpu", 100, 1.0e6, 0.1e6), Result("io", 100, 1.05e6, 0.1e6)};
  v1::CaseResult failed = Result("broken", 10, 0.5e6, 0.01e6);
  failed.set_status(v1::CASE_STATUS_FAILED);
  results.push_back(failed);  // left out

  const StrategyMap map = BuildStrategyMap(results);
  ASSERT_EQ(map.points.size(), 2u);
  const MapPoint& a = map.points[0];
  EXPECT_EQ(a.group, "batch/synthetic[cpu_ns=1000]/blocking/any");
  ASSERT_EQ(a.point.size(), 1u);
  EXPECT_EQ(a.point[0].first, "wait_us");
  EXPECT_EQ(a.point[0].second, 10);
  ASSERT_EQ(a.ranked.size(), 2u);
  EXPECT_EQ(a.winner(), "cpu");
  EXPECT_EQ(a.ranked[1].strategy, "io");
  EXPECT_FALSE(a.tie);
  EXPECT_EQ(a.decisive_winner(), "cpu");
  EXPECT_DOUBLE_EQ(a.ratio, 2.0);
  EXPECT_DOUBLE_EQ(a.ratio_low, 1.8 / 1.1);
  EXPECT_DOUBLE_EQ(a.ratio_high, 2.2 / 0.9);

  const MapPoint& b = map.points[1];
  EXPECT_EQ(b.winner(), "cpu");
  EXPECT_TRUE(b.tie);
  EXPECT_EQ(b.decisive_winner(), "");
  EXPECT_EQ(b.tied, (std::vector<std::string>{"cpu", "io"}));
  EXPECT_LE(b.ratio_low, 1.0);
  EXPECT_TRUE(map.crossovers.empty());  // no decisive change of winner

  const std::string text = FormatStrategyMap(map);
  EXPECT_THAT(text, HasSubstr("batch/synthetic[cpu_ns=1000]/blocking/any  (swept: wait_us)"));
  EXPECT_THAT(text, HasSubstr("2.00x [1.64x, 2.44x]"));
  EXPECT_THAT(text, HasSubstr("cpu wins"));
  EXPECT_THAT(text, HasSubstr("tie: cpu, io"));
}

TEST(StrategyMapTest, AMarginBelowTheMinimumIsATieEvenWhenTheCisSeparate) {
  // io is 1% slower with tight CIs that do not overlap: below the default 2% minimum.
  const std::vector<v1::CaseResult> results = {Result("cpu", 10, 1.00e6, 0.001e6), Result("io", 10, 1.01e6, 0.001e6),
                                               Result("far", 10, 1.50e6, 0.001e6)};
  const StrategyMap map = BuildStrategyMap(results);
  ASSERT_EQ(map.points.size(), 1u);
  const MapPoint& p = map.points[0];
  EXPECT_GT(p.ratio_low, 1.0);  // the CIs separate
  EXPECT_TRUE(p.tie);
  EXPECT_TRUE(p.below_min_margin);
  EXPECT_EQ(p.decisive_winner(), "");
  EXPECT_EQ(p.tied, (std::vector<std::string>{"cpu", "io"}));  // far is neither within the margin nor the CI
  EXPECT_EQ(VerdictText(p), "tie: cpu, io (margin 1.0% < 2.0%)");
  // A smaller stated minimum makes cpu the winner; a 3% margin beats the default.
  const StrategyMap loose = BuildStrategyMap(results, MapOptions{.min_margin = 0.005});
  EXPECT_EQ(loose.points[0].decisive_winner(), "cpu");
  EXPECT_EQ(VerdictText(loose.points[0]), "cpu wins");
  const StrategyMap clear = BuildStrategyMap({Result("cpu", 10, 1.00e6, 0.001e6), Result("io", 10, 1.03e6, 0.001e6)});
  EXPECT_EQ(clear.points[0].decisive_winner(), "cpu");
  EXPECT_FALSE(clear.points[0].below_min_margin);
}

TEST(StrategyMapTest, AResultWithoutACiTiesWithEverything) {
  v1::CaseResult one = Result("io", 10, 3.0e6, 0);
  one.mutable_stats()->set_count(1);
  one.mutable_stats()->set_ci_half_width_percent(std::numeric_limits<double>::infinity());
  const StrategyMap map = BuildStrategyMap({Result("cpu", 10, 1.0e6, 0.01e6), one});
  ASSERT_EQ(map.points.size(), 1u);
  EXPECT_EQ(map.points[0].winner(), "cpu");
  EXPECT_TRUE(map.points[0].tie);  // n = 1 bounds nothing: never a winner on it
  EXPECT_TRUE(std::isinf(map.points[0].ratio_high));
  // As the winner, it is shown without a CI, and still only ties.
  one.mutable_stats()->set_median_ns(0.5e6);
  const StrategyMap lone = BuildStrategyMap({Result("cpu", 10, 1.0e6, 0.01e6), one});
  EXPECT_EQ(lone.points[0].winner(), "io");
  EXPECT_TRUE(lone.points[0].tie);
  EXPECT_THAT(FormatStrategyMap(lone), HasSubstr("500 µs [no CI, n=1]"));
  EXPECT_THAT(FormatStrategyMap(lone), HasSubstr("tie: io, cpu"));
}

// Without a CI but with several samples that were all slower than the winner's CI (a
// pool that hit its time cap with 4 repetitions at 40x the winner's time): not a tie.
// A CI-less entry whose fastest sample reaches into the winner's CI still ties.
TEST(StrategyMapTest, AResultWithoutACiWhoseEverySampleIsSlowerDoesNotTie) {
  v1::CaseResult capped = Result("cpu", 10, 162e6, 0);
  capped.mutable_stats()->set_count(4);
  capped.mutable_stats()->set_min_ns(150e6);
  capped.mutable_stats()->set_ci_half_width_percent(std::numeric_limits<double>::infinity());
  const v1::CaseResult winner = Result("io", 10, 4.21e6, 0.03e6), runner_up = Result("elastic", 10, 4.73e6, 0.05e6);
  const StrategyMap map = BuildStrategyMap({winner, runner_up, capped});
  ASSERT_EQ(map.points.size(), 1u);
  EXPECT_EQ(map.points[0].decisive_winner(), "io");
  EXPECT_EQ(map.points[0].tied, std::vector<std::string>{"io"});
  EXPECT_EQ(VerdictText(map.points[0]), "io wins");
  capped.mutable_stats()->set_min_ns(4.22e6);  // one sample as fast as the winner
  const StrategyMap close = BuildStrategyMap({winner, runner_up, capped});
  EXPECT_TRUE(close.points[0].tie);
  EXPECT_EQ(close.points[0].tied, (std::vector<std::string>{"io", "cpu"}));
}

TEST(StrategyMapTest, CrossoverBracketedByDecisivePointsWithAnInterpolatedEstimate) {
  // cpu wins at 10 and 100, tie at 316, io wins at 1000 and 3162. The medians cross
  // between 316 (io/cpu = 1.1) and 1000 (io/cpu = 1/1.1): the log-midpoint, sqrt(316e3).
  const StrategyMap map = BuildStrategyMap({
      Result("cpu", 10, 1.0e6, 0.01e6),
      Result("io", 10, 3.0e6, 0.01e6),
      Result("cpu", 100, 1.0e6, 0.01e6),
      Result("io", 100, 2.0e6, 0.01e6),
      Result("cpu", 316, 1.0e6, 0.2e6),
      Result("io", 316, 1.1e6, 0.2e6),
      Result("cpu", 1000, 1.1e6, 0.01e6),
      Result("io", 1000, 1.0e6, 0.01e6),
      Result("cpu", 3162, 3.0e6, 0.01e6),
      Result("io", 3162, 1.0e6, 0.01e6),
  });
  ASSERT_EQ(map.points.size(), 5u);
  EXPECT_TRUE(map.points[2].tie);
  ASSERT_EQ(map.crossovers.size(), 1u);
  const Crossover& c = map.crossovers[0];
  EXPECT_EQ(c.param, "wait_us");
  EXPECT_EQ(c.from, "cpu");
  EXPECT_EQ(c.to, "io");
  EXPECT_EQ(c.low, 100);  // the last point cpu won decisively
  EXPECT_EQ(c.high, 1000);
  EXPECT_NEAR(c.estimate, std::sqrt(316.0 * 1000.0), 1e-6);
  EXPECT_THAT(FormatStrategyMap(map), HasSubstr("crossover wait_us: cpu -> io at ~562, between 100 and 1000"));
}

TEST(StrategyMapTest, TwoSweptParametersGiveCrossoversPerLine) {
  // cpu_ns 1000: cpu wins up to wait 100, io from 1000. cpu_ns 100000: cpu wins everywhere.
  std::vector<v1::CaseResult> results;
  for (uint32_t wait : {10u, 100u, 1000u}) {
    const bool io_wins = wait >= 1000;
    results.push_back(Result("cpu", wait, io_wins ? 2.0e6 : 1.0e6, 0.01e6, 1000, true));
    results.push_back(Result("io", wait, io_wins ? 1.0e6 : 2.0e6, 0.01e6, 1000, true));
    results.push_back(Result("cpu", wait, 1.0e6, 0.01e6, 100000, true));
    results.push_back(Result("io", wait, 2.0e6, 0.01e6, 100000, true));
  }
  const StrategyMap map = BuildStrategyMap(results);
  ASSERT_EQ(map.points.size(), 6u);
  EXPECT_EQ(map.points[0].group, "batch/synthetic/blocking/any");
  // Along wait_us at cpu_ns 1000 (cpu -> io), and along cpu_ns at wait_us 1000 (io -> cpu).
  ASSERT_EQ(map.crossovers.size(), 2u);
  const Crossover& c = map.crossovers[0];
  EXPECT_EQ(c.param, "wait_us");
  ASSERT_EQ(c.fixed.size(), 1u);
  EXPECT_EQ(c.fixed[0].first, "cpu_ns");
  EXPECT_EQ(c.fixed[0].second, 1000);
  EXPECT_EQ(c.low, 100);
  EXPECT_EQ(c.high, 1000);
  const Crossover& d = map.crossovers[1];
  EXPECT_EQ(d.param, "cpu_ns");
  EXPECT_EQ(d.from, "io");
  EXPECT_EQ(d.to, "cpu");
  EXPECT_EQ(d.fixed[0].second, 1000);  // wait_us
  EXPECT_EQ(d.low, 1000);
  EXPECT_EQ(d.high, 100000);
  const std::string text = FormatStrategyMap(map);
  EXPECT_THAT(text, HasSubstr("crossover wait_us (cpu_ns=1000): cpu -> io"));
  EXPECT_THAT(text, HasSubstr("crossover cpu_ns (wait_us=1000): io -> cpu"));
}

TEST(StrategyMapTest, CsvKeepsTheSweepParametersAsColumns) {
  v1::RunReport report;
  *report.add_results() = Result("cpu", 316, 1.0e6, 0.01e6);
  report.mutable_results(0)->add_synthetic_ns_per_iteration(0.5);
  report.mutable_results(0)->add_synthetic_ns_per_iteration(1.5);
  const std::string csv = FormatCsv(report);
  EXPECT_THAT(csv, HasSubstr(",cpu_ns,wait_us,wait_distribution,wait_seed,alloc_bytes,touch_kib,swept,"
                             "synthetic_ns_per_iteration,"));
  EXPECT_THAT(csv, HasSubstr(",1000,316,fixed,0,0,0,wait_us,1,"));
}

}  // namespace
}  // namespace fleetmark::report
