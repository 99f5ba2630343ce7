// Unit tests of coordinator/changes: change-point detection (History and the scan), the
// newest-point rule that makes a suspected change, and the confirmation verdict.
#include <cmath>
#include <vector>

#include "coordinator/changes/change_points.h"
#include "coordinator/changes/confirmation.h"
#include "gtest/gtest.h"

namespace fleetmark::changes {
namespace {

TEST(ChangePointsTest, FindsAStepAndNothingInNoise) {
  std::vector<double> series;
  for (int i = 0; i < 14; ++i) series.push_back((i >= 8 ? 130 : 100) * (1 + 0.01 * std::sin(i * 1.7)));
  EXPECT_EQ(DetectChangePoints(series), std::vector<size_t>({8}));

  std::vector<double> flat;
  for (int i = 0; i < 30; ++i) flat.push_back(100 * (1 + 0.02 * std::sin(i * 2.3)));
  EXPECT_TRUE(DetectChangePoints(flat).empty());
}

TEST(ChangePointsTest, TwoStepsSkippingMissingPoints) {
  std::vector<double> series = {50, 51, 49, 50, 0, 80, 81, 79, 80, 81, 40, 41, 40, 39};
  EXPECT_EQ(DetectChangePoints(series), std::vector<size_t>({5, 10}));
  EXPECT_TRUE(DetectChangePoints({1.0, 2.0, 3.0}).empty());
  EXPECT_TRUE(DetectChangePoints({}).empty());
}

// A noisier device needs a bigger jump: an 8 % step is a change on a quiet device
// (noise 0.5 %), not on one whose noise score is 4 % (threshold max(3 %, 3 × 4 %) = 12 %);
// a 30 % step is a change on both.
TEST(ChangePointsTest, TheThresholdScalesWithTheDeviceNoise) {
  std::vector<double> step8, step30;
  for (int i = 0; i < 14; ++i) {
    const double wobble = 1 + 0.005 * std::sin(i * 1.7);
    step8.push_back((i >= 7 ? 108 : 100) * wobble);
    step30.push_back((i >= 7 ? 130 : 100) * wobble);
  }
  ChangePointOptions quiet;
  quiet.noise = 0.005;
  ChangePointOptions noisy;
  noisy.noise = 0.04;
  EXPECT_EQ(DetectChangePoints(step8, quiet), std::vector<size_t>({7}));
  EXPECT_TRUE(DetectChangePoints(step8, noisy).empty());
  EXPECT_EQ(DetectChangePoints(step30, noisy), std::vector<size_t>({7}));
  // Unknown (0) or garbage noise: the default threshold.
  ChangePointOptions garbage;
  garbage.noise = std::nan("");
  EXPECT_EQ(DetectChangePoints(step8, garbage), DetectChangePoints(step8));
}

TEST(ChangePointsTest, AFingerprintBreakIsNotAChangePoint) {
  std::vector<double> series;
  for (int i = 0; i < 14; ++i) series.push_back((i >= 8 ? 130 : 100) * (1 + 0.01 * std::sin(i * 1.7)));
  // The step at 8 is where the device changed: no change point there.
  EXPECT_TRUE(DetectChangePointsInSegments(series, {8}).empty());
  // A real step inside a segment is still found, with indices into the whole series.
  std::vector<double> two = {50, 51, 49, 50, 51, 50, 90, 91, 89, 90, 120, 121, 119, 120};
  EXPECT_EQ(DetectChangePointsInSegments(two, {10}), std::vector<size_t>({6}));
  // No breaks, or breaks out of range: as DetectChangePoints.
  EXPECT_EQ(DetectChangePointsInSegments(series, {}), DetectChangePoints(series));
  EXPECT_EQ(DetectChangePointsInSegments(series, {0, 99}), DetectChangePoints(series));
  EXPECT_TRUE(DetectChangePointsInSegments({}, {3}).empty());
}

TEST(ChangePointsTest, FingerprintBreaksSkipUnknownHashes) {
  EXPECT_EQ(FingerprintBreaks({"a", "a", "", "b", "b", "", "b", "c"}), std::vector<size_t>({3, 7}));
  EXPECT_TRUE(FingerprintBreaks({"", "", "a"}).empty());
  EXPECT_TRUE(FingerprintBreaks({}).empty());
}

TEST(ChangePointsTest, TheLastSegmentMayBeOnePointWhenAsked) {
  std::vector<double> series = {100, 101, 99, 100, 101, 100, 150};
  // History: 2 points per segment, so the newest point alone never starts one.
  for (size_t i : DetectChangePoints(series)) EXPECT_LT(i, 6u);
  ChangePointOptions scan;
  scan.min_last_segment = 1;
  EXPECT_EQ(DetectChangePoints(series, scan), std::vector<size_t>({6}));
  EXPECT_DOUBLE_EQ(MinRelativeChange(scan), 0.03);
  scan.noise = 0.02;
  EXPECT_DOUBLE_EQ(MinRelativeChange(scan), 0.06);
}

std::vector<double> Flat(int n, double level) {
  std::vector<double> out;
  for (int i = 0; i < n; ++i) out.push_back(level * (1 + 0.005 * std::sin(i * 1.7)));
  return out;
}

TEST(ConfirmationTest, TheNewestPointStartsAChange) {
  std::vector<double> series = Flat(8, 100);
  series.push_back(300);
  auto suspected = NewestPointStartsChange(series, {}, 0);
  ASSERT_TRUE(suspected.has_value());
  EXPECT_NEAR(suspected->old_level_ns, 100, 1);
  EXPECT_DOUBLE_EQ(suspected->new_level_ns, 300);
  EXPECT_DOUBLE_EQ(suspected->min_relative_change, 0.03);
  // Within the noise: no change; nor when the newest point failed (0) or follows a
  // fingerprint break (a new kernel starts a new segment).
  series.back() = 101;
  EXPECT_FALSE(NewestPointStartsChange(series, {}, 0).has_value());
  series.back() = 0;
  EXPECT_FALSE(NewestPointStartsChange(series, {}, 0).has_value());
  series.back() = 300;
  EXPECT_FALSE(NewestPointStartsChange(series, {8}, 0).has_value());
  // A noisy device (noise 40 %: threshold 120 %) does not flag a 2x point...
  series.back() = 200;
  EXPECT_FALSE(NewestPointStartsChange(series, {}, 0.4).has_value());
  // ...which a quiet one does.
  EXPECT_TRUE(NewestPointStartsChange(series, {}, 0.005).has_value());
  // Too short a history: nothing.
  EXPECT_FALSE(NewestPointStartsChange({100, 300}, {}, 0).has_value());
  EXPECT_FALSE(NewestPointStartsChange({}, {}, 0).has_value());
}

TEST(ConfirmationTest, TheOldLevelIsTheSegmentSinceTheLastChange) {
  std::vector<double> series = Flat(6, 100);
  for (double v : Flat(6, 200)) series.push_back(v);
  series.push_back(50);
  auto suspected = NewestPointStartsChange(series, {}, 0);
  ASSERT_TRUE(suspected.has_value());
  EXPECT_NEAR(suspected->old_level_ns, 200, 2);
}

TEST(ConfirmationTest, VerdictRule) {
  // Old 100, new 200: a confirmation at 190 is closer to the new level and beyond 3 %.
  EXPECT_EQ(JudgeConfirmation(100, 200, 190, 0).state, kConfirmed);
  // Back at the old level: not reproduced.
  EXPECT_EQ(JudgeConfirmation(100, 200, 103, 0).state, kNotReproduced);
  // Half-way in log space (141.4) is not closer to the new level.
  EXPECT_EQ(JudgeConfirmation(100, 200, 140, 0).state, kNotReproduced);
  EXPECT_EQ(JudgeConfirmation(100, 200, 145, 0).state, kConfirmed);
  // Closer to a new level that is itself small, but within the threshold of the old one.
  EXPECT_EQ(JudgeConfirmation(100, 104, 103.5, 0).state, kConfirmed);      // 3.5 % >= 3 %
  EXPECT_EQ(JudgeConfirmation(100, 104, 102.5, 0).state, kNotReproduced);  // 2.5 % < 3 %
  // The threshold scales with the noise: 3 × 5 % = 15 %.
  EXPECT_EQ(JudgeConfirmation(100, 130, 112, 0.05).state, kNotReproduced);
  EXPECT_EQ(JudgeConfirmation(100, 130, 125, 0.05).state, kConfirmed);
  // Faster is a change too.
  EXPECT_EQ(JudgeConfirmation(100, 50, 55, 0).state, kConfirmed);
  const ChangeVerdict v = JudgeConfirmation(1e6, 2e6, 1.9e6, 0);
  EXPECT_EQ(v.reason,
            "confirmation 1.90 ms: +90.0 % from the old level 1.00 ms (a change is at least 3.0 %), -5.0 % from the "
            "new level 2.00 ms");
}

TEST(ConfirmationTest, StateNames) {
  for (const char* s : {"suspected", "confirmed", "not_reproduced", "unconfirmed"}) EXPECT_TRUE(IsChangeState(s)) << s;
  EXPECT_FALSE(IsChangeState("not reproduced"));
  EXPECT_FALSE(IsChangeState(""));
}

}  // namespace
}  // namespace fleetmark::changes
