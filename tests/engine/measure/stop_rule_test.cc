// Stop-rule decisions and settings validation.
#include "engine/measure/stop_rule.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace fleetmark::engine {
namespace {

StopRuleOptions Rule(double target, int64_t min_reps, int64_t max_reps, double max_s) {
  StopRuleOptions o;
  o.target_ci_percent = target;
  o.min_repetitions = min_reps;
  o.max_repetitions = max_reps;
  o.max_time = absl::Seconds(max_s);
  return o;
}

// n samples alternating around 1000 ns by ±spread.
std::vector<int64_t> Samples(int n, int64_t spread) {
  std::vector<int64_t> v;
  for (int i = 0; i < n; ++i) v.push_back(1000 + (i % 2 == 0 ? spread : -spread));
  return v;
}

TEST(StopRuleTest, StopsOnCiTargetOnceMinRepetitionsReached) {
  const StopRuleOptions rule = Rule(2, 10, 1000, 10);
  // Spread ±5 ns = ±0.5%: tight enough, but only after min_repetitions.
  StopDecision d = DecideStop(Samples(9, 5), rule, absl::Seconds(1));
  EXPECT_FALSE(d.stop);
  EXPECT_EQ(d.reason, v1::STOP_REASON_UNSPECIFIED);
  d = DecideStop(Samples(10, 5), rule, absl::Seconds(1));
  EXPECT_TRUE(d.stop);
  EXPECT_EQ(d.reason, v1::STOP_REASON_CI_TARGET);
  EXPECT_EQ(d.stats.count(), 10u);
  EXPECT_LE(d.stats.ci_half_width_percent(), 2);
}

TEST(StopRuleTest, NeedsSixSamplesForACiEvenWithLowMinimum) {
  const StopRuleOptions rule = Rule(2, 1, 1000, 10);
  EXPECT_FALSE(DecideStop(Samples(5, 0), rule, absl::ZeroDuration()).stop);
  const StopDecision d = DecideStop(Samples(6, 0), rule, absl::ZeroDuration());
  EXPECT_TRUE(d.stop);
  EXPECT_EQ(d.reason, v1::STOP_REASON_CI_TARGET);
}

TEST(StopRuleTest, WideSpreadRunsToTheRepetitionCap) {
  const StopRuleOptions rule = Rule(2, 10, 50, 10);
  // ±30% spread: the CI never gets within 2%.
  EXPECT_FALSE(DecideStop(Samples(49, 300), rule, absl::Seconds(1)).stop);
  const StopDecision d = DecideStop(Samples(50, 300), rule, absl::Seconds(1));
  EXPECT_TRUE(d.stop);
  EXPECT_EQ(d.reason, v1::STOP_REASON_MAX_REPETITIONS);
}

TEST(StopRuleTest, TimeCapWinsOverMinimumButNeedsOneSample) {
  const StopRuleOptions rule = Rule(2, 10, 1000, 1);
  EXPECT_FALSE(DecideStop({}, rule, absl::Seconds(5)).stop);
  const StopDecision d = DecideStop(Samples(3, 300), rule, absl::Seconds(1));
  EXPECT_TRUE(d.stop);
  EXPECT_EQ(d.reason, v1::STOP_REASON_MAX_TIME);
  EXPECT_FALSE(DecideStop(Samples(3, 300), rule, absl::Milliseconds(999)).stop);
}

TEST(StopRuleTest, CiTargetTakesPrecedenceOverCaps) {
  const StopRuleOptions rule = Rule(2, 10, 10, 1);
  const StopDecision d = DecideStop(Samples(10, 1), rule, absl::Seconds(2));
  EXPECT_EQ(d.reason, v1::STOP_REASON_CI_TARGET);
}

TEST(StopRuleTest, ZeroTargetDisablesCiStop) {
  const StopRuleOptions rule = Rule(0, 1, 20, 10);
  EXPECT_FALSE(DecideStop(Samples(19, 0), rule, absl::ZeroDuration()).stop);
  EXPECT_EQ(DecideStop(Samples(20, 0), rule, absl::ZeroDuration()).reason, v1::STOP_REASON_MAX_REPETITIONS);
}

TEST(StopRuleOptionsTest, DefaultsForZeroFields) {
  const absl::StatusOr<StopRuleOptions> o = StopRuleOptionsFromSettings({});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_DOUBLE_EQ(o->target_ci_percent, 2);
  EXPECT_EQ(o->min_repetitions, 10);
  EXPECT_EQ(o->max_repetitions, 1000);
  EXPECT_EQ(o->max_time, absl::Seconds(10));
}

TEST(StopRuleOptionsTest, SmallExplicitMaximumLowersDefaultMinimum) {
  v1::MeasurementSettings s;
  s.set_max_repetitions(3);
  const absl::StatusOr<StopRuleOptions> o = StopRuleOptionsFromSettings(s);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->min_repetitions, 3);
}

TEST(StopRuleOptionsTest, ErrorsNameFieldValueAndRange) {
  v1::MeasurementSettings s;
  s.set_target_ci_percent(-1);
  absl::Status st = StopRuleOptionsFromSettings(s, "plan.measurement").status();
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("plan.measurement.target_ci_percent"), std::string::npos) << st;
  EXPECT_NE(st.message().find("got -1"), std::string::npos) << st;

  s.Clear();
  s.set_max_repetitions(2'000'000);
  st = StopRuleOptionsFromSettings(s).status();
  EXPECT_NE(st.message().find("measurement.max_repetitions"), std::string::npos) << st;
  EXPECT_NE(st.message().find("1000000"), std::string::npos) << st;

  s.Clear();
  s.set_min_repetitions(20);
  s.set_max_repetitions(10);
  st = StopRuleOptionsFromSettings(s).status();
  EXPECT_NE(st.message().find("min_repetitions"), std::string::npos) << st;

  s.Clear();
  s.set_max_seconds_per_case(-0.5);
  st = StopRuleOptionsFromSettings(s).status();
  EXPECT_NE(st.message().find("max_seconds_per_case"), std::string::npos) << st;
  s.set_max_seconds_per_case(std::numeric_limits<double>::infinity());
  EXPECT_FALSE(StopRuleOptionsFromSettings(s).ok());
}

TEST(StopRuleTest, HierarchicalRuleNeedsItsProcessesBeforeTheCiTarget) {
  StopRuleOptions rule = Rule(2, 10, 100000, 100);
  rule.processes = 3;
  rule.bootstrap_seed = 9;
  // Two tight processes at the same level: the CI would do, but there are only two.
  std::vector<int64_t> v = Samples(40, 5);
  StopDecision d = DecideStop(v, std::vector<uint32_t>{20, 20}, rule, absl::Seconds(1));
  EXPECT_FALSE(d.stop);
  // A third one: it stops on the CI target.
  v = Samples(60, 5);
  d = DecideStop(v, std::vector<uint32_t>{20, 20, 20}, rule, absl::Seconds(1));
  EXPECT_TRUE(d.stop);
  EXPECT_EQ(d.reason, v1::STOP_REASON_CI_TARGET);
  // A third process of one sample counts only once it holds min_process_repetitions.
  v = Samples(41, 5);
  rule.min_process_repetitions = 4;
  d = DecideStop(v, std::vector<uint32_t>{20, 20, 1}, rule, absl::Seconds(1));
  EXPECT_FALSE(d.stop);
  v = Samples(44, 5);
  d = DecideStop(v, std::vector<uint32_t>{20, 20, 4}, rule, absl::Seconds(1));
  EXPECT_EQ(d.reason, v1::STOP_REASON_CI_TARGET);
  rule.min_process_repetitions = 1;
  // Three processes 10% apart: each is tight, but the case's CI is not.
  std::vector<int64_t> apart;
  for (int64_t level : {1000, 1100, 1200}) {
    for (int64_t x : Samples(20, 5)) apart.push_back(x - 1000 + level);
  }
  d = DecideStop(apart, std::vector<uint32_t>{20, 20, 20}, rule, absl::Seconds(1));
  EXPECT_FALSE(d.stop);
  EXPECT_GT(d.stats.ci_half_width_percent(), 2);
  // The pooled rule (processes 1) would have stopped on the same samples.
  rule.processes = 1;
  d = DecideStop(apart, std::vector<uint32_t>{20, 20, 20}, rule, absl::Seconds(1));
  EXPECT_EQ(d.reason, v1::STOP_REASON_CI_TARGET);
  EXPECT_EQ(d.stats.SerializeAsString(), DecideStop(apart, rule, absl::Seconds(1)).stats.SerializeAsString());
}

TEST(StopRuleTest, ProcessesSetting) {
  v1::MeasurementSettings s;
  EXPECT_EQ(StopRuleOptionsFromSettings(s)->processes, kDefaultProcesses);
  s.set_processes(64);
  EXPECT_EQ(StopRuleOptionsFromSettings(s)->processes, 64);
  s.set_processes(65);
  const absl::Status st = StopRuleOptionsFromSettings(s, "plan.measurement").status();
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(), "plan.measurement.processes: 1 <= processes <= 64 (0 = 3), got 65");
}

}  // namespace
}  // namespace fleetmark::engine

namespace fleetmark::engine {
namespace {

TEST(StopRuleTest, NoCiStopBeforeTheMinimumTime) {
  StopRuleOptions rule = Rule(2, 10, 1000, 10);
  rule.min_time = absl::Seconds(0.5);
  // Tight samples, but only 0.2 s measured: the CI alone does not end the case.
  StopDecision d = DecideStop(Samples(100, 5), rule, absl::Seconds(0.2));
  EXPECT_FALSE(d.stop);
  d = DecideStop(Samples(100, 5), rule, absl::Seconds(0.5));
  EXPECT_TRUE(d.stop);
  EXPECT_EQ(d.reason, v1::STOP_REASON_CI_TARGET);
  // The caps still end it (the minimum time is not a way past the budget).
  EXPECT_EQ(DecideStop(Samples(1000, 5), rule, absl::Seconds(0.1)).reason, v1::STOP_REASON_MAX_REPETITIONS);
}

TEST(StopRuleOptionsTest, MinimumTimeDefaultAndRange) {
  absl::StatusOr<StopRuleOptions> o = StopRuleOptionsFromSettings({});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->min_time, absl::Seconds(kDefaultMinSecondsPerCase));
  v1::MeasurementSettings s;
  s.set_max_seconds_per_case(0.2);  // the default minimum is lowered to it
  o = StopRuleOptionsFromSettings(s);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->min_time, absl::Seconds(0.2));
  s.set_min_seconds_per_case(0.3);  // an explicit one above it is an error
  absl::Status st = StopRuleOptionsFromSettings(s, "plan.measurement").status();
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("plan.measurement.min_seconds_per_case"), std::string::npos) << st;
  EXPECT_NE(st.message().find("got 0.3"), std::string::npos) << st;
  s.set_min_seconds_per_case(-1);
  EXPECT_FALSE(StopRuleOptionsFromSettings(s).ok());
  s.set_min_seconds_per_case(std::nan(""));
  EXPECT_FALSE(StopRuleOptionsFromSettings(s).ok());
}

// `fast` samples near 385 µs, then `slow` near 2 ms (±1%), as fixed_pool(2)/collections.
std::vector<int64_t> Phases(int fast, int slow) {
  std::vector<int64_t> v;
  for (int i = 0; i < fast; ++i) v.push_back(385'000 + (i * 37) % 7'700 - 3'850);
  for (int i = 0; i < slow; ++i) v.push_back(2'000'000 + (i * 41) % 40'000 - 20'000);
  return v;
}

TEST(DriftTest, AFastThenSlowPhaseDrifts) {
  const DriftCheck d = DetectDrift(Phases(50, 50), 2.0);
  EXPECT_TRUE(d.checked);
  EXPECT_TRUE(d.drifting);
  EXPECT_NEAR(d.first_median_ns, 385'000, 4'000);
  EXPECT_NEAR(d.second_median_ns, 2'000'000, 20'000);
  // A fast majority of the first half: still a drift.
  EXPECT_TRUE(DetectDrift(Phases(30, 70), 2.0).drifting);
  // A fast minority of the first half moves no median: nothing left to drop.
  EXPECT_FALSE(DetectDrift(Phases(15, 85), 2.0).drifting);
}

TEST(DriftTest, ASettledPhaseDoesNotDrift) {
  const DriftCheck d = DetectDrift(Phases(0, 200), 2.0);
  EXPECT_TRUE(d.checked);
  EXPECT_FALSE(d.drifting);
  // Alternating noise of ±30%: wide, but no level shift between the halves.
  EXPECT_FALSE(DetectDrift(Samples(200, 300), 2.0).drifting);
  // A shift smaller than the tolerance is not a drift, even with disjoint CIs.
  std::vector<int64_t> small(100, 1000);
  for (int i = 50; i < 100; ++i) small[i] = 1010;
  EXPECT_FALSE(DetectDrift(small, 2.0).drifting);
  EXPECT_FALSE(DetectDrift(small, 1e-7).drifting);  // the tolerance's floor is 1%
  for (int i = 50; i < 100; ++i) small[i] = 1030;
  EXPECT_TRUE(DetectDrift(small, 2.0).drifting);
}

TEST(DriftTest, TooFewSamplesGiveNoVerdict) {
  const DriftCheck d = DetectDrift(Phases(10, 9), 2.0);
  EXPECT_FALSE(d.checked);
  EXPECT_FALSE(d.drifting);
  EXPECT_FALSE(DetectDrift({}, 2.0).checked);
}

}  // namespace
}  // namespace fleetmark::engine
