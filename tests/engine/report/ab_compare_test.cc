// Fleet A/B on results with known answers: the one verdict rule per device (paired
// rounds with the moderated interval; one process never decides; a gap inside the
// margin is equivalent), the fleet summary, and how --cases items match case ids.
#include "engine/report/ab_compare.h"

#include <cmath>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "engine/measure/verdict.h"
#include "tests/engine/report/sweep_results.h"

namespace fleetmark::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A batch result (sweep_results.h) with per-round (process) medians and the CI m ± h.
v1::CaseResult Rounds(const std::vector<double>& medians, double median, double half) {
  v1::CaseResult r = testing::SweepResult("direct", 10, median, half);
  r.clear_process_medians_ns();
  for (double m : medians) r.add_process_medians_ns(m);
  return r;
}

TEST(AbCompareTest, PairedRoundsDecideWhereTheMediansCisOverlap) {
  // Rounds drift a lot (wide median CIs overlap), but B is 10% faster in every round.
  // On a device whose spread is 2 %: A/B = 1/0.9 with the moderated interval
  // exp(±t(0.975, 7) · √(4 · 2 · 0.02² / 7 / 4)) = ×/÷ 1.0256, decided.
  const v1::CaseResult a = Rounds({1.0e6, 1.5e6, 2.0e6, 1.2e6}, 1.35e6, 0.5e6);
  const v1::CaseResult b = Rounds({0.9e6, 1.35e6, 1.8e6, 1.08e6}, 1.215e6, 0.45e6);
  const MapOptions device{.spread = 0.02};
  const DeviceAb ab = CompareAb("vm", &a, &b, device);
  EXPECT_EQ(ab.paired_rounds, 4);
  EXPECT_NEAR(ab.ratio, 0.9, 1e-9);
  const double half = engine::StudentTQuantile(0.975, 7) * std::sqrt(4 * 2 * 0.02 * 0.02 / 7 / 4);
  EXPECT_NEAR(ab.low, 0.9 * std::exp(-half), 1e-9);
  EXPECT_NEAR(ab.high, 0.9 * std::exp(half), 1e-9);
  EXPECT_EQ(ab.verdict, AbVerdict::kFaster);
  EXPECT_THAT(ab.method, HasSubstr("paired rounds (n=4, moderated t)"));
  const DeviceAb reverse = CompareAb("vm", &b, &a, device);
  EXPECT_EQ(reverse.verdict, AbVerdict::kSlower);
  EXPECT_NEAR(reverse.ratio, 1 / 0.9, 1e-9);
  EXPECT_NEAR(reverse.low, 1 / ab.high, 1e-9);
  // Without a stated spread, the two cases alone (not two contenders of one point: no
  // residual to pool) leave the default prior (σ0 1.5 %, ν0 4); their 30 % drift between
  // rounds is shared by both and cancels (B / A is 0.9 in every round: no residual over
  // 3 dof), so the margin is 2 · 0.015 · √(4 / 7) = 2.3 % and the 10 % gap is decided.
  const DeviceAb own = CompareAb("vm", &a, &b);
  EXPECT_EQ(own.verdict, AbVerdict::kFaster) << own.reason;
  EXPECT_THAT(own.reason, HasSubstr("beyond the 2.3 % margin"));
}

TEST(AbCompareTest, OneProcessPerCaseIsNeverFasterOrSlower) {
  // No process medians: one process per case, whatever the samples' CIs say.
  const v1::CaseResult a = Rounds({}, 1.0e6, 0.01e6);
  const v1::CaseResult b = Rounds({}, 2.0e6, 0.02e6);
  const DeviceAb ab = CompareAb("vm", &a, &b);
  EXPECT_EQ(ab.paired_rounds, 1);
  EXPECT_EQ(ab.method, "1 paired round: provisional, no interval");
  EXPECT_DOUBLE_EQ(ab.ratio, 2.0);
  EXPECT_EQ(ab.low, 0);
  EXPECT_TRUE(std::isinf(ab.high));
  EXPECT_EQ(ab.verdict, AbVerdict::kUndecided);
  const FleetAb fleet = SummarizeFleet({ab});
  const std::string text = FormatAb({"a", "b"}, {ab}, fleet);
  EXPECT_THAT(text, HasSubstr("2.00x"));
  EXPECT_THAT(text, Not(HasSubstr("[0.00x")));
  const std::string row = text.substr(text.find("\nvm "), text.find('\n', text.find("\nvm ") + 1) - text.find("\nvm "));
  EXPECT_THAT(row, HasSubstr("undecided")) << text;
  EXPECT_THAT(row, Not(HasSubstr("faster"))) << text;
  EXPECT_THAT(row, Not(HasSubstr("slower"))) << text;
  // Not measured / failed on one side.
  v1::CaseResult failed = b;
  failed.set_status(v1::CASE_STATUS_UNSUPPORTED);
  EXPECT_EQ(CompareAb("vm", &a, &failed).verdict, AbVerdict::kUnmeasured);
  EXPECT_EQ(CompareAb("vm", &a, &failed).b_status, "unsupported");
  EXPECT_EQ(CompareAb("vm", nullptr, &b).a_status, "not measured");
}

TEST(AbCompareTest, AGapInsideTheMarginIsEquivalent) {
  // 1% faster in every round on a quiet device (spread 0.1 %): inside the 2 % margin.
  const v1::CaseResult a = Rounds({1.0e6, 2.0e6, 3.0e6}, 2.0e6, 1e6);
  const v1::CaseResult b = Rounds({0.99e6, 1.98e6, 2.97e6}, 1.98e6, 1e6);
  const DeviceAb ab = CompareAb("vm", &a, &b, MapOptions{.spread = 0.001});
  EXPECT_LT(ab.high, 1);
  EXPECT_EQ(ab.verdict, AbVerdict::kEquivalent);
  EXPECT_EQ(CompareAb("vm", &a, &b, MapOptions{.min_margin = 0.005, .spread = 0.001}).verdict, AbVerdict::kFaster);
  EXPECT_EQ(RatioVerdict(0.97, 0.96, 0.98), AbVerdict::kFaster);
  EXPECT_EQ(RatioVerdict(1.03, 1.01, 1.05), AbVerdict::kSlower);
  EXPECT_EQ(RatioVerdict(0.9, 0.8, 1.01), AbVerdict::kUndecided);  // the interval holds 1
  EXPECT_EQ(RatioVerdict(1.0, 0.99, 1.01), AbVerdict::kEquivalent);
}

TEST(AbCompareTest, FleetSummaryCountsDevicesAndTakesTheGeometricMean) {
  std::vector<DeviceAb> devices(4);
  const double ratios[] = {0.5, 0.5, 2.0, 1.0};
  const AbVerdict verdicts[] = {AbVerdict::kFaster, AbVerdict::kFaster, AbVerdict::kSlower, AbVerdict::kUndecided};
  for (int i = 0; i < 4; ++i) {
    devices[i].ratio = ratios[i];
    devices[i].verdict = verdicts[i];
  }
  devices.push_back(DeviceAb{.device = "unmeasured"});
  const FleetAb fleet = SummarizeFleet(devices);
  EXPECT_EQ(fleet.faster, 2);
  EXPECT_EQ(fleet.slower, 1);
  EXPECT_EQ(fleet.undecided, 1);
  EXPECT_EQ(fleet.equivalent, 0);
  EXPECT_EQ(fleet.unmeasured, 1);
  EXPECT_EQ(fleet.devices, 4);
  // ln ratios {-l, -l, l, 0}, l = ln 2: mean -l/4, s = l * sqrt(11/12).
  const double l = std::log(2.0), mean = -l / 4, s = l * std::sqrt(11.0 / 12);
  EXPECT_NEAR(fleet.ratio, std::exp(mean), 1e-12);
  EXPECT_NEAR(std::log(fleet.low), mean - engine::StudentTQuantile(0.975, 3) * s / 2, 1e-9);
  EXPECT_NEAR(std::log(fleet.high), mean + engine::StudentTQuantile(0.975, 3) * s / 2, 1e-9);
  EXPECT_EQ(fleet.verdict, AbVerdict::kUndecided);
  const std::string text = FormatAb({"a", "b"}, devices, fleet);
  EXPECT_THAT(text, HasSubstr("fleet: B is faster on 2 devices, slower on 1, equivalent on 0, undecided on 1, not "
                              "measured on 1"));
  const nlohmann::json json = AbJson({"a", "b"}, devices, fleet);
  EXPECT_EQ(json["fleet"]["faster"], 2);
  EXPECT_EQ(json["fleet"]["undecided"], 1);
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
