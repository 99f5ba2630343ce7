// The strategy map on synthetic results with known answers: the one verdict rule
// (decided, equivalent, undecided, provisional, contended) on the process medians, the
// paired ratio with its interval, the device spread, and crossovers along one and two
// swept parameters.
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
using ::testing::Not;
using testing::ProcessResult;

// A result of `label` at a sweep point (sweep_results.h).
v1::CaseResult Result(const std::string& label, uint32_t wait, double median, double half, uint32_t cpu = 1000,
                      bool two = false) {
  return testing::SweepResult(label, wait, median, half, cpu, two);
}

TEST(StrategyMapTest, DecidedAndUndecidedPointsWithThePairedRatio) {
  std::vector<v1::CaseResult> results = {// wait 10: io is 2x cpu in every round (processes m ± h:
                                         // a ±10 % drift both share, which pairing cancels).
                                         Result("cpu", 10, 1.0e6, 0.1e6), Result("io", 10, 2.0e6, 0.2e6),
                                         // wait 100: io 1.03x, slower in rounds 1-2, faster in 3.
                                         Result("cpu", 100, 1.0e6, 0.1e6),
                                         ProcessResult("io", 100, {0.95e6, 1.1e6, 1.05e6})};
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
  EXPECT_EQ(a.kind, engine::VerdictKind::kDecided) << a.reason;
  EXPECT_FALSE(a.tie);
  EXPECT_EQ(a.decisive_winner(), "cpu");
  // The residual spread: the wait-10 pair has none (d = ln 2 in every round, up to
  // rounding), the wait-100 pair's d = {ln(0.95/0.9), ln 1.1, ln(1.05/1.1)} gives SS / 2
  // over 2 dof: pooled σ̂ = √(SS / 2 / 4) = 0.0364775 with 4 dof. The prior fitted to the
  // two points' own variances (one of rounding size, raised to 1e-5 of the median) has
  // almost no dof: each point rests on its own rounds. At wait 10 the interval is ln 2
  // exactly and the margin the 2 % floor.
  EXPECT_NEAR(a.margin, 0.02, 1e-12);
  EXPECT_NEAR(a.ratio, 2.0, 1e-12);
  EXPECT_NEAR(a.ratio_low, 2.0, 1e-3);
  EXPECT_NEAR(a.ratio_high, 2.0, 1e-3);
  EXPECT_EQ(a.pairs, 3);
  EXPECT_TRUE(a.has_interval());

  const MapPoint& b = map.points[1];
  EXPECT_EQ(b.winner(), "cpu");
  EXPECT_EQ(b.kind, engine::VerdictKind::kUndecided);
  EXPECT_TRUE(b.tie);
  EXPECT_EQ(b.decisive_winner(), "");
  EXPECT_EQ(b.tied, (std::vector<std::string>{"cpu", "io"}));
  EXPECT_NEAR(b.ratio, 1.0348803, 1e-6);
  // Close to the plain paired t interval exp(mean ± t(0.975, 2) · s / √3) =
  // [0.8633, 1.2405]: the prior adds a little.
  EXPECT_NEAR(b.ratio_low, 0.8861781, 1e-6);
  EXPECT_NEAR(b.ratio_high, 1.2085350, 1e-6);
  EXPECT_GT(b.ratio_low, 0.8633);
  EXPECT_LT(b.ratio_high, 1.2405);
  EXPECT_TRUE(map.crossovers.empty());  // no decided change of winner

  const std::string text = FormatStrategyMap(map);
  EXPECT_THAT(text, HasSubstr("batch/synthetic[cpu_ns=1000]/blocking/any  (swept: wait_us)"));
  EXPECT_THAT(text, HasSubstr("cpu wins (2.00x [2.00x, 2.00x] over io)"));
  EXPECT_THAT(text, HasSubstr("undecided: io 1.03x [0.89x, 1.21x] against cpu straddles the 9.8 % margin"));
  EXPECT_EQ(VerdictText(a), "cpu wins (2.00x [2.00x, 2.00x] over io)");
  // The spread is measured once over the whole map: a stated one replaces it.
  const StrategyMap quiet = BuildStrategyMap(results, MapOptions{.spread = 0.01});
  EXPECT_DOUBLE_EQ(quiet.points[0].margin, 0.02);
  const engine::ResidualSpread spread = SpreadOf({&results[0], &results[1], &results[2], &results[3], &results[4]});
  EXPECT_NEAR(spread.sigma, 0.0364775, 1e-6);
  EXPECT_DOUBLE_EQ(spread.dof, 4);
}

TEST(StrategyMapTest, AGapInsideTheMarginIsEquivalentNeverAWin) {
  // io is 1 % slower in every round with tight processes (device spread 0.09 %): inside
  // the default 2 % margin, so cpu and io are equivalent; far (1.5x) is out.
  const std::vector<v1::CaseResult> results = {ProcessResult("cpu", 10, {1.00e6, 1.001e6, 0.999e6}),
                                               ProcessResult("io", 10, {1.01e6, 1.011e6, 1.009e6}),
                                               ProcessResult("far", 10, {1.50e6, 1.501e6, 1.499e6})};
  const StrategyMap map = BuildStrategyMap(results);
  ASSERT_EQ(map.points.size(), 1u);
  const MapPoint& p = map.points[0];
  EXPECT_EQ(p.kind, engine::VerdictKind::kEquivalent) << p.reason;
  EXPECT_GT(p.ratio_low, 1.0);    // io is slower in every round...
  EXPECT_LT(p.ratio_high, 1.02);  // ...by less than the margin
  EXPECT_TRUE(p.tie);
  EXPECT_EQ(p.decisive_winner(), "");
  EXPECT_EQ(p.tied, (std::vector<std::string>{"cpu", "io"}));  // far is out
  EXPECT_EQ(VerdictText(p), "equivalent within 2.0 %: cpu, io");
  // A stated 0.5 % minimum margin makes cpu the winner: io's interval [1.0085, 1.0115]
  // lies above 1.005 and io was slower in every round.
  const StrategyMap loose = BuildStrategyMap(results, MapOptions{.min_margin = 0.005});
  EXPECT_EQ(loose.points[0].decisive_winner(), "cpu");
  EXPECT_EQ(VerdictText(loose.points[0]), "cpu wins (1.01x [1.01x, 1.01x] over io)");
}

TEST(StrategyMapTest, OneProcessIsProvisionalAndPrintsNoInterval) {
  // A result without process medians is one process (its median, round 1).
  v1::CaseResult one = Result("io", 10, 3.0e6, 0);
  one.clear_process_medians_ns();
  one.mutable_stats()->set_count(1);
  one.mutable_stats()->set_ci_half_width_percent(std::numeric_limits<double>::infinity());
  const StrategyMap map = BuildStrategyMap({Result("cpu", 10, 1.0e6, 0.01e6), one});
  ASSERT_EQ(map.points.size(), 1u);
  const MapPoint& p = map.points[0];
  EXPECT_EQ(p.winner(), "cpu");
  EXPECT_EQ(p.kind, engine::VerdictKind::kProvisional);
  EXPECT_TRUE(p.tie);  // one process is never a winner
  EXPECT_EQ(p.pairs, 1);
  EXPECT_FALSE(p.has_interval());
  EXPECT_EQ(VerdictText(p), "provisional: 1 process \u2014 not a verdict");
  EXPECT_EQ(PointRatioText(p), "3.03x");  // the one paired round: 3.0 ms / cpu's 0.99 ms
  const std::string text = FormatStrategyMap(map);
  EXPECT_THAT(text, HasSubstr(" 3.03x "));
  EXPECT_THAT(text, HasSubstr("provisional: 1 process"));
  EXPECT_THAT(text, Not(HasSubstr("[0.00x")));
  EXPECT_THAT(text, Not(HasSubstr("inf]")));
  // As the leader it is shown without a CI.
  one.mutable_stats()->set_median_ns(0.5e6);
  const StrategyMap lone = BuildStrategyMap({Result("cpu", 10, 1.0e6, 0.01e6), one});
  EXPECT_EQ(lone.points[0].winner(), "io");
  EXPECT_EQ(lone.points[0].kind, engine::VerdictKind::kProvisional);
  // The map shows the centre it ranks by (the geometric mean of process medians) with
  // the number of processes, not the pooled median's within-process CI.
  EXPECT_THAT(FormatStrategyMap(lone), HasSubstr("500 µs (1 proc.)"));
  EXPECT_THAT(FormatStrategyMap(lone), HasSubstr("centre: geometric mean of the strategy's per-process medians"));
}

// One sample per process (a pool that hit its time cap: no CI), 38x slower than the
// leader in each of three rounds: decided, not a tie. The runner-up (1.13x in every
// round) is out too. The run is this one group, so the prior adds no dof: the plain
// paired t interval over 2 dof.
TEST(StrategyMapTest, AFortyTimesGapFromOneSamplePerProcessIsDecided) {
  v1::CaseResult capped = ProcessResult("cpu", 10, {162e6, 158e6, 165e6});
  capped.mutable_stats()->set_count(3);
  capped.mutable_stats()->set_ci_half_width_percent(std::numeric_limits<double>::infinity());
  const v1::CaseResult winner = ProcessResult("io", 10, {4.21e6, 4.25e6, 4.18e6});
  const v1::CaseResult runner_up = ProcessResult("elastic", 10, {4.73e6, 4.80e6, 4.70e6});
  const StrategyMap map = BuildStrategyMap({capped, runner_up, winner});
  ASSERT_EQ(map.points.size(), 1u);
  const MapPoint& p = map.points[0];
  EXPECT_EQ(p.decisive_winner(), "io") << p.reason;
  EXPECT_EQ(p.tied, std::vector<std::string>{"io"});
  ASSERT_EQ(p.ranked.size(), 3u);
  EXPECT_EQ(p.ranked[1].strategy, "elastic");
  EXPECT_EQ(p.ranked[2].strategy, "cpu");
  EXPECT_NEAR(p.ratio_low, 1.1179088, 1e-6);
  EXPECT_EQ(VerdictText(p), "io wins (1.13x [1.12x, 1.13x] over elastic)");
}

TEST(StrategyMapTest, ShowsTheCentreItRanksByNotThePooledMedian) {
  // a's pooled median is 4.17 ms (its last process ran long), b's 2.50 ms, but by the
  // centre of their process medians a leads: 2.47 ms against 3.48 ms. The table shows
  // the centres, so the leader never looks slower than the runner-up.
  v1::CaseResult a = ProcessResult("a", 10, {2.0e6, 2.5e6, 3.0e6});
  a.mutable_stats()->set_median_ns(4.17e6);
  v1::CaseResult b = ProcessResult("b", 10, {3.0e6, 3.5e6, 4.0e6});
  b.mutable_stats()->set_median_ns(2.5e6);
  const StrategyMap map = BuildStrategyMap({b, a});
  ASSERT_EQ(map.points.size(), 1u);
  EXPECT_EQ(map.points[0].winner(), "a");
  EXPECT_NEAR(map.points[0].ranked[0].centre_ns, std::cbrt(2.0e6 * 2.5e6 * 3.0e6), 1e-3);
  const std::string text = FormatStrategyMap(map);
  EXPECT_THAT(text, HasSubstr("a       2.47 ms (3 proc.)"));
  EXPECT_THAT(text, HasSubstr("b          3.48 ms (3 proc.)"));
  EXPECT_THAT(text, Not(HasSubstr("4.17 ms")));
  EXPECT_THAT(text, Not(HasSubstr("2.50 ms")));
}

TEST(StrategyMapTest, AContendedResultLeavesThePointUndecided) {
  // io is 2x slower, measured while other work took 60 % of the CPU: up to 2.5x of it
  // may be that work's (engine/measure/verdict.h, Contention).
  v1::CaseResult contended = Result("io", 10, 2.0e6, 0.2e6);
  contended.set_contended(true);
  contended.set_other_cpu_share(0.6);
  const StrategyMap map = BuildStrategyMap({Result("cpu", 10, 1.0e6, 0.1e6), contended});
  ASSERT_EQ(map.points.size(), 1u);
  EXPECT_EQ(map.points[0].kind, engine::VerdictKind::kUndecided);
  EXPECT_EQ(VerdictText(map.points[0]), "undecided: contended: io measured while other work used the device");
  EXPECT_TRUE(map.points[0].ranked[1].contended);
  // At 30 % the work explains at most 1.43x of the 2x: decided all the same.
  contended.set_other_cpu_share(0.3);
  const StrategyMap light = BuildStrategyMap({Result("cpu", 10, 1.0e6, 0.1e6), contended});
  EXPECT_EQ(light.points[0].kind, engine::VerdictKind::kDecided) << light.points[0].reason;
}

TEST(StrategyMapTest, ProcessRoundsPairTheProcesses) {
  // io ran in rounds 2-4, cpu in 1-3: two common rounds (provisional); with the rounds
  // left out both would count as rounds 1-3.
  v1::CaseResult io = Result("io", 10, 2.0e6, 0.2e6);
  for (uint32_t round : {2u, 3u, 4u}) io.add_process_rounds(round);
  const StrategyMap paired = BuildStrategyMap({Result("cpu", 10, 1.0e6, 0.1e6), io});
  EXPECT_EQ(paired.points[0].pairs, 2);
  EXPECT_EQ(paired.points[0].kind, engine::VerdictKind::kProvisional);
  io.clear_process_rounds();
  EXPECT_EQ(BuildStrategyMap({Result("cpu", 10, 1.0e6, 0.1e6), io}).points[0].pairs, 3);
}

TEST(StrategyMapTest, CrossoverBracketedByDecisivePointsWithAnInterpolatedEstimate) {
  // cpu wins at 10 and 100, undecided at 316 (io faster in round 1, slower in 2 and 3),
  // io wins at 1000 and 3162 (device spread 1 %). The centres (geometric means of the
  // process medians) cross between 316 (io/cpu = 1.0437) and 1000 (io/cpu = 1/1.1),
  // interpolated in log(wait_us): ~449.6.
  const StrategyMap map = BuildStrategyMap(
      {
          Result("cpu", 10, 1.0e6, 0.01e6),
          Result("io", 10, 3.0e6, 0.01e6),
          Result("cpu", 100, 1.0e6, 0.01e6),
          Result("io", 100, 2.0e6, 0.01e6),
          ProcessResult("cpu", 316, {1.2e6, 1.0e6, 0.8e6}),
          ProcessResult("io", 316, {1.1e6, 1.1e6, 0.9e6}),
          Result("cpu", 1000, 1.1e6, 0.01e6),
          Result("io", 1000, 1.0e6, 0.01e6),
          Result("cpu", 3162, 3.0e6, 0.01e6),
          Result("io", 3162, 1.0e6, 0.01e6),
      },
      MapOptions{.spread = 0.01});
  ASSERT_EQ(map.points.size(), 5u);
  EXPECT_EQ(map.points[2].kind, engine::VerdictKind::kUndecided);
  for (size_t i : {0, 1, 3, 4}) EXPECT_EQ(map.points[i].kind, engine::VerdictKind::kDecided) << i;
  ASSERT_EQ(map.crossovers.size(), 1u);
  const Crossover& c = map.crossovers[0];
  EXPECT_EQ(c.param, "wait_us");
  EXPECT_EQ(c.from, "cpu");
  EXPECT_EQ(c.to, "io");
  EXPECT_EQ(c.low, 100);  // the last point cpu won decisively
  EXPECT_EQ(c.high, 1000);
  EXPECT_NEAR(c.estimate, 449.555933, 1e-5);
  EXPECT_THAT(FormatStrategyMap(map), HasSubstr("crossover wait_us: cpu -> io at ~450, between 100 and 1000"));
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
