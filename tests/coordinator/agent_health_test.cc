// The noise score and the quarantine rules (coordinator/store/agent_health.h) on
// injected calibration series.
#include "coordinator/store/agent_health.h"

#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"

namespace fleetmark::store {
namespace {

// `n` nights of three calibration cases around 1 ms, 10 ms and 100 µs, each night's
// medians multiplied by 1 + spread × (a fixed pattern in [-1, 1]).
std::vector<CalibrationNight> Nights(int n, double spread) {
  static const double kPattern[] = {0.3, -0.8, 1.0, -0.2, 0.6, -1.0, 0.1, 0.9, -0.5, 0.0};
  std::vector<CalibrationNight> nights;
  for (int i = 0; i < n; ++i) {
    CalibrationNight night{absl::StrCat("run-", i), {}};
    const double f = 1 + spread * kPattern[i % 10];
    night.median_ns["a"] = 1e6 * f;
    night.median_ns["b"] = 1e7 * f;
    night.median_ns["c"] = 1e5 * f;
    nights.push_back(night);
  }
  return nights;
}

// The newest night at exactly `factor` × the base medians.
void SetNewest(std::vector<CalibrationNight>& nights, double factor) {
  nights.back().median_ns = {{"a", 1e6 * factor}, {"b", 1e7 * factor}, {"c", 1e5 * factor}};
}

TEST(AgentHealthTest, CalibrationCasesAreTheLabelledOnes) {
  EXPECT_TRUE(IsCalibrationLabel("calibration_direct"));
  EXPECT_FALSE(IsCalibrationLabel("direct"));
  EXPECT_FALSE(IsCalibrationLabel("my_calibration_direct"));
}

TEST(AgentHealthTest, NoiseIsARobustScaleFreeSpread) {
  EXPECT_FALSE(NoiseScore(Nights(2, 0.01)).has_value()) << "fewer than 3 nights: unknown";
  const std::optional<double> quiet = NoiseScore(Nights(10, 0.01));
  const std::optional<double> noisy = NoiseScore(Nights(10, 0.05));
  ASSERT_TRUE(quiet && noisy);
  EXPECT_GT(*quiet, 0.003);
  EXPECT_LT(*quiet, 0.02);
  EXPECT_NEAR(*noisy / *quiet, 5, 0.5) << "the score grows with the spread";
  // Scale-free: a device 7x slower with the same relative spread has the same score.
  std::vector<CalibrationNight> slow = Nights(10, 0.01);
  for (CalibrationNight& night : slow) {
    for (auto& [id, median] : night.median_ns) median *= 7;
  }
  EXPECT_NEAR(*NoiseScore(slow), *quiet, 1e-9);
  // Robust: one terrible night barely moves it.
  std::vector<CalibrationNight> one_bad = Nights(10, 0.01);
  for (auto& [id, median] : one_bad[4].median_ns) median *= 3;
  EXPECT_LT(*NoiseScore(one_bad), 1.5 * *quiet);
}

TEST(AgentHealthTest, TheNewestNightDriftingBeyondTheLimitQuarantines) {
  HealthOptions options;  // drift limit max(10 %, 4 x noise)
  std::vector<CalibrationNight> nights = Nights(8, 0.01);
  HealthVerdict steady = EvaluateCalibration(nights, options);
  EXPECT_TRUE(steady.quarantine_reason.empty()) << steady.quarantine_reason;
  ASSERT_TRUE(steady.drift.has_value());
  EXPECT_LT(std::fabs(*steady.drift), 0.03);

  SetNewest(nights, 1.25);
  HealthVerdict drifted = EvaluateCalibration(nights, options);
  ASSERT_TRUE(drifted.drift.has_value());
  EXPECT_NEAR(*drifted.drift, 0.25, 0.03);
  EXPECT_NE(drifted.quarantine_reason.find("calibration drift"), std::string::npos) << drifted.quarantine_reason;
  EXPECT_NE(drifted.quarantine_reason.find("slower"), std::string::npos) << drifted.quarantine_reason;
  EXPECT_NE(drifted.quarantine_reason.find("7 earlier nights"), std::string::npos) << drifted.quarantine_reason;

  // A noisy device gets a wider band: the same 25 % is within 4 x its noise.
  std::vector<CalibrationNight> noisy = Nights(8, 0.1);
  SetNewest(noisy, 1.25);
  options.noise_limit_percent = 0;  // rule (b) off: only the drift rule speaks here
  EXPECT_TRUE(EvaluateCalibration(noisy, options).quarantine_reason.empty());

  // Too little history: no drift verdict at all.
  std::vector<CalibrationNight> short_series = Nights(3, 0.01);
  SetNewest(short_series, 2);
  EXPECT_FALSE(EvaluateCalibration(short_series, HealthOptions{}).drift.has_value());
}

TEST(AgentHealthTest, OnlyOneCaseDriftingIsNotADeviceDrift) {
  std::vector<CalibrationNight> nights = Nights(8, 0.01);
  nights.back().median_ns["a"] *= 2;  // one case: the median over cases ignores it
  EXPECT_TRUE(EvaluateCalibration(nights, HealthOptions{}).quarantine_reason.empty());
}

TEST(AgentHealthTest, NoiseAboveTheLimitQuarantinesOnceEnoughNights) {
  HealthOptions options;
  options.noise_limit_percent = 5;
  options.drift_percent = 0;  // rule (a) off
  EXPECT_TRUE(EvaluateCalibration(Nights(4, 0.2), options).quarantine_reason.empty()) << "fewer than 5 nights";
  HealthVerdict noisy = EvaluateCalibration(Nights(10, 0.2), options);
  EXPECT_NE(noisy.quarantine_reason.find("exceeds the limit of 5 %"), std::string::npos) << noisy.quarantine_reason;
  EXPECT_TRUE(EvaluateCalibration(Nights(10, 0.01), options).quarantine_reason.empty());
}

TEST(AgentHealthTest, TheWindowIsTheNewestKNights) {
  HealthOptions options;
  options.noise_nights = 5;
  std::vector<CalibrationNight> nights = Nights(5, 0.3);  // old, noisy
  std::vector<CalibrationNight> recent = Nights(5, 0.01);
  nights.insert(nights.end(), recent.begin(), recent.end());
  HealthVerdict v = EvaluateCalibration(nights, options);
  EXPECT_EQ(v.nights, 5);
  ASSERT_TRUE(v.noise.has_value());
  EXPECT_LT(*v.noise, 0.02);
}

TEST(AgentHealthTest, DeferredJobsInARowAndOptionChecks) {
  HealthOptions options;  // 3 in a row
  EXPECT_EQ(DeferredQuarantineReason(2, options, "deferred: battery"), "");
  EXPECT_NE(DeferredQuarantineReason(3, options, "deferred: battery").find("3 jobs in a row"), std::string::npos);
  options.deferred_jobs = 0;
  EXPECT_EQ(DeferredQuarantineReason(50, options, "x"), "") << "0 = off";

  EXPECT_TRUE(ValidateHealthOptions(HealthOptions{}).ok());
  HealthOptions bad;
  bad.noise_nights = 2;
  EXPECT_EQ(ValidateHealthOptions(bad).message(), "--noise_nights: 3 <= noise_nights <= 1000, got 2");
  bad = HealthOptions{};
  bad.noise_limit_percent = -1;
  EXPECT_EQ(ValidateHealthOptions(bad).message(),
            "--quarantine_noise_percent: 0 <= quarantine_noise_percent <= 1000, got -1");
}

}  // namespace
}  // namespace fleetmark::store
