// Fleet A/B on results with known answers: the paired-round log-ratio interval, the
// unpaired fallback, n = 1 never decides, the minimum margin, the fleet summary, and how
// --cases items match case ids.
#include "engine/report/ab_compare.h"

#include <cmath>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/engine/report/sweep_results.h"

namespace fleetmark::report {
namespace {

using ::testing::HasSubstr;

// A batch result (sweep_results.h) with per-round (process) medians and the CI m ± h.
v1::CaseResult Rounds(const std::vector<double>& medians, double median, double half) {
  v1::CaseResult r = testing::SweepResult("direct", 10, median, half);
  for (double m : medians) r.add_process_medians_ns(m);
  return r;
}

TEST(AbCompareTest, StudentTQuantileMatchesTheTable) {
  EXPECT_NEAR(StudentT975(1), 12.706, 1e-3);
  EXPECT_NEAR(StudentT975(4), 2.776, 1e-3);
  EXPECT_NEAR(StudentT975(30), 2.042, 1e-3);
}

TEST(AbCompareTest, PairedLogRatioKnownAnswer) {
  // Every round B = 1.1 A although the rounds drift 4x: the paired ratio is exactly 1.1.
  const PairedRatio exact = PairedLogRatio({100, 200, 400}, {110, 220, 440});
  EXPECT_EQ(exact.n, 3);
  EXPECT_NEAR(exact.ratio, 1.1, 1e-12);
  EXPECT_NEAR(exact.low, 1.1, 1e-12);
  EXPECT_NEAR(exact.high, 1.1, 1e-12);
  // ln ratios {0.1, 0.3}: mean 0.2, s = 0.1414, half = t(0.975, 1) * s / sqrt 2 = 12.706 * 0.1.
  const PairedRatio two = PairedLogRatio({1, 1, 7}, {std::exp(0.1), std::exp(0.3)});
  EXPECT_EQ(two.n, 2);
  EXPECT_NEAR(two.ratio, std::exp(0.2), 1e-12);
  EXPECT_NEAR(std::log(two.low), 0.2 - StudentT975(1) * 0.1, 1e-9);
  EXPECT_NEAR(std::log(two.high), 0.2 + StudentT975(1) * 0.1, 1e-9);
  EXPECT_EQ(PairedLogRatio({1}, {2}).ratio, 0);        // one pair: no interval
  EXPECT_EQ(PairedLogRatio({1, 0}, {2, 2}).ratio, 0);  // a zero round: none
}

TEST(AbCompareTest, PairedRoundsDecideWhereTheMediansCisOverlap) {
  // Rounds drift a lot (wide median CIs overlap), but B is 10% faster in every round.
  const v1::CaseResult a = Rounds({1.0e6, 1.5e6, 2.0e6, 1.2e6}, 1.35e6, 0.5e6);
  const v1::CaseResult b = Rounds({0.9e6, 1.35e6, 1.8e6, 1.08e6}, 1.215e6, 0.45e6);
  const DeviceAb ab = CompareAb("vm", &a, &b);
  EXPECT_EQ(ab.paired_rounds, 4);
  EXPECT_NEAR(ab.ratio, 0.9, 1e-9);
  EXPECT_LT(ab.high, 1);
  EXPECT_EQ(ab.verdict, AbVerdict::kFaster);
  EXPECT_THAT(ab.method, HasSubstr("paired rounds (n=4"));
  const DeviceAb reverse = CompareAb("vm", &b, &a);
  EXPECT_EQ(reverse.verdict, AbVerdict::kSlower);
  EXPECT_NEAR(reverse.ratio, 1 / 0.9, 1e-9);
}

TEST(AbCompareTest, WithoutRoundsTheMediansCisDecideAndNEqualsOneNever) {
  const v1::CaseResult a = Rounds({}, 1.0e6, 0.01e6);
  const v1::CaseResult b = Rounds({}, 2.0e6, 0.02e6);
  const DeviceAb ab = CompareAb("vm", &a, &b);
  EXPECT_EQ(ab.paired_rounds, 0);
  EXPECT_EQ(ab.method, "medians' CIs (unpaired)");
  EXPECT_DOUBLE_EQ(ab.ratio, 2.0);
  EXPECT_DOUBLE_EQ(ab.low, 1.98e6 / 1.01e6);
  EXPECT_DOUBLE_EQ(ab.high, 2.02e6 / 0.99e6);
  EXPECT_EQ(ab.verdict, AbVerdict::kSlower);
  // n = 1: no CI, never a verdict other than a tie, however large the ratio.
  v1::CaseResult one = b;
  one.mutable_stats()->set_count(1);
  one.mutable_stats()->set_ci_half_width_percent(std::numeric_limits<double>::infinity());
  const DeviceAb single = CompareAb("vm", &a, &one);
  EXPECT_EQ(single.verdict, AbVerdict::kTie);
  EXPECT_TRUE(std::isinf(single.high));
  EXPECT_EQ(single.method, "no CI (n=1)");
  // Not measured / failed on one side.
  v1::CaseResult failed = b;
  failed.set_status(v1::CASE_STATUS_UNSUPPORTED);
  EXPECT_EQ(CompareAb("vm", &a, &failed).verdict, AbVerdict::kUnmeasured);
  EXPECT_EQ(CompareAb("vm", &a, &failed).b_status, "unsupported");
  EXPECT_EQ(CompareAb("vm", nullptr, &b).a_status, "not measured");
}

TEST(AbCompareTest, AMarginBelowTheMinimumIsATie) {
  // 1% faster in every round, and the interval excludes 1: below the 2% minimum.
  const v1::CaseResult a = Rounds({1.0e6, 2.0e6, 3.0e6}, 2.0e6, 1e6);
  const v1::CaseResult b = Rounds({0.99e6, 1.98e6, 2.97e6}, 1.98e6, 1e6);
  const DeviceAb ab = CompareAb("vm", &a, &b);
  EXPECT_LT(ab.high, 1);
  EXPECT_EQ(ab.verdict, AbVerdict::kTie);
  EXPECT_EQ(CompareAb("vm", &a, &b, MapOptions{.min_margin = 0.005}).verdict, AbVerdict::kFaster);
  EXPECT_EQ(RatioVerdict(0.97, 0.96, 0.98), AbVerdict::kFaster);
  EXPECT_EQ(RatioVerdict(1.03, 1.01, 1.05), AbVerdict::kSlower);
  EXPECT_EQ(RatioVerdict(0.9, 0.8, 1.01), AbVerdict::kTie);  // the interval holds 1
}

TEST(AbCompareTest, FleetSummaryCountsDevicesAndTakesTheGeometricMean) {
  std::vector<DeviceAb> devices(4);
  const double ratios[] = {0.5, 0.5, 2.0, 1.0};
  const AbVerdict verdicts[] = {AbVerdict::kFaster, AbVerdict::kFaster, AbVerdict::kSlower, AbVerdict::kTie};
  for (int i = 0; i < 4; ++i) {
    devices[i].ratio = ratios[i];
    devices[i].verdict = verdicts[i];
  }
  devices.push_back(DeviceAb{.device = "unmeasured"});
  const FleetAb fleet = SummarizeFleet(devices);
  EXPECT_EQ(fleet.faster, 2);
  EXPECT_EQ(fleet.slower, 1);
  EXPECT_EQ(fleet.tie, 1);
  EXPECT_EQ(fleet.unmeasured, 1);
  EXPECT_EQ(fleet.devices, 4);
  // ln ratios {-l, -l, l, 0}, l = ln 2: mean -l/4, s = l * sqrt(11/12).
  const double l = std::log(2.0), mean = -l / 4, s = l * std::sqrt(11.0 / 12);
  EXPECT_NEAR(fleet.ratio, std::exp(mean), 1e-12);
  EXPECT_NEAR(std::log(fleet.low), mean - StudentT975(3) * s / 2, 1e-9);
  EXPECT_NEAR(std::log(fleet.high), mean + StudentT975(3) * s / 2, 1e-9);
  EXPECT_EQ(fleet.verdict, AbVerdict::kTie);
  const std::string text = FormatAb({"a", "b"}, devices, fleet);
  EXPECT_THAT(text, HasSubstr("fleet: B is faster on 2 devices, slower on 1, tie on 1, not measured on 1"));
  const nlohmann::json json = AbJson({"a", "b"}, devices, fleet);
  EXPECT_EQ(json["fleet"]["faster"], 2);
  EXPECT_EQ(json["devices"][4]["verdict"], "not measured");
  EXPECT_TRUE(json["devices"][4]["ratio"].is_null());
}

TEST(AbCompareTest, CasesMatchByIdOrWholeParts) {
  const std::vector<std::string> ids = {"batch/arithmetic/blocking/direct/any",
                                        "batch/arithmetic/blocking/fixed_pool/any", "batch/storage/blocking/direct/any",
                                        "batch/storage/blocking/fixed_pool_io/any"};
  absl::StatusOr<CasePair> exact = MatchCases({ids[0], ids[1]}, ids);
  ASSERT_TRUE(exact.ok()) << exact.status();
  EXPECT_EQ(exact->b, ids[1]);
  absl::StatusOr<CasePair> parts = MatchCases({"storage/blocking/direct", "fixed_pool_io"}, ids);
  ASSERT_TRUE(parts.ok()) << parts.status();
  EXPECT_EQ(parts->a, ids[2]);
  EXPECT_EQ(parts->b, ids[3]);
  // "fixed_pool" is a whole part of one id only ("fixed_pool_io" is another part).
  EXPECT_TRUE(MatchCases({"arithmetic/blocking/direct", "fixed_pool"}, ids).ok());

  absl::Status ambiguous = MatchCases({"direct", "fixed_pool"}, ids).status();
  EXPECT_EQ(ambiguous.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(ambiguous.message(), HasSubstr("--cases: \"direct\" matches 2 cases"));
  EXPECT_THAT(ambiguous.message(), HasSubstr(ids[2]));
  absl::Status unknown = MatchCases({"fixed_pol", ids[0]}, ids).status();
  EXPECT_THAT(unknown.message(), HasSubstr("--cases: \"fixed_pol\" matches no case"));
  EXPECT_THAT(unknown.message(), HasSubstr("close: batch/arithmetic/blocking/fixed_pool/any"));
  EXPECT_THAT(MatchCases({ids[0]}, ids).status().message(), HasSubstr("--cases: two case ids or labels A,B, got 1"));
  EXPECT_THAT(MatchCases({ids[0], "arithmetic/blocking/direct"}, ids).status().message(), HasSubstr("the same case"));
}

}  // namespace
}  // namespace fleetmark::report
