// Statistics against hand-computed values and CI ranks against a binomial table.
#include "engine/measure/statistics.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace fleetmark::engine {
namespace {

TEST(StatisticsTest, OddCountHandComputed) {
  const std::vector<int64_t> samples = {5, 1, 3, 2, 4};
  const v1::Statistics s = ComputeStatistics(samples);
  EXPECT_EQ(s.count(), 5u);
  EXPECT_DOUBLE_EQ(s.min_ns(), 1);
  EXPECT_DOUBLE_EQ(s.max_ns(), 5);
  EXPECT_DOUBLE_EQ(s.median_ns(), 3);
  EXPECT_DOUBLE_EQ(s.mean_ns(), 3);
  EXPECT_NEAR(s.stddev_ns(), std::sqrt(2.5), 1e-12);  // sum of squares 10 / (n - 1)
  EXPECT_DOUBLE_EQ(s.mad_ns(), 1);                     // |d| = {2,1,0,1,2} -> median 1
  EXPECT_EQ(s.outliers(), 0u);
  // n = 5 < 6: no order-statistic interval reaches 95%.
  EXPECT_DOUBLE_EQ(s.ci_low_ns(), 1);
  EXPECT_DOUBLE_EQ(s.ci_high_ns(), 5);
  EXPECT_TRUE(std::isinf(s.ci_half_width_percent()));
}

TEST(StatisticsTest, EvenCountWithOutlierHandComputed) {
  const std::vector<int64_t> samples = {6, 100, 1, 4, 2, 3};
  const v1::Statistics s = ComputeStatistics(samples);
  EXPECT_EQ(s.count(), 6u);
  EXPECT_DOUBLE_EQ(s.median_ns(), 3.5);  // (3 + 4) / 2
  EXPECT_NEAR(s.mean_ns(), 116.0 / 6, 1e-12);
  // deviations {2.5,1.5,0.5,0.5,2.5,96.5} -> sorted middle (1.5 + 2.5) / 2
  EXPECT_DOUBLE_EQ(s.mad_ns(), 2);
  // fence 3 · 1.4826 · 2 = 8.8956: only 100 is outside.
  EXPECT_EQ(s.outliers(), 1u);
  // n = 6: ranks (1, 6), coverage 1 - 2/64.
  EXPECT_DOUBLE_EQ(s.ci_low_ns(), 1);
  EXPECT_DOUBLE_EQ(s.ci_high_ns(), 100);
  EXPECT_NEAR(s.ci_half_width_percent(), 100.0 * 96.5 / 3.5, 1e-9);
  double sum_sq = 0;
  for (int64_t x : samples) sum_sq += (x - 116.0 / 6) * (x - 116.0 / 6);
  EXPECT_NEAR(s.stddev_ns(), std::sqrt(sum_sq / 5), 1e-9);
}

TEST(StatisticsTest, TiesGiveZeroMadAndNoOutliers) {
  const std::vector<int64_t> samples = {7, 7, 7, 7, 10, 7, 7, 7, 7, 7};
  const v1::Statistics s = ComputeStatistics(samples);
  EXPECT_DOUBLE_EQ(s.median_ns(), 7);
  EXPECT_DOUBLE_EQ(s.mad_ns(), 0);
  EXPECT_EQ(s.outliers(), 0u);  // MAD 0: the outlier rule is undefined, none counted
  // n = 10: ranks (2, 9) of sorted {7 x9, 10}.
  EXPECT_DOUBLE_EQ(s.ci_low_ns(), 7);
  EXPECT_DOUBLE_EQ(s.ci_high_ns(), 7);
  EXPECT_DOUBLE_EQ(s.ci_half_width_percent(), 0);
}

TEST(StatisticsTest, SingleAndEmpty) {
  const std::vector<int64_t> one = {42};
  const v1::Statistics s = ComputeStatistics(one);
  EXPECT_EQ(s.count(), 1u);
  EXPECT_DOUBLE_EQ(s.median_ns(), 42);
  EXPECT_DOUBLE_EQ(s.stddev_ns(), 0);
  EXPECT_DOUBLE_EQ(s.mad_ns(), 0);
  EXPECT_TRUE(std::isinf(s.ci_half_width_percent()));

  const v1::Statistics e = ComputeStatistics(std::vector<int64_t>{});
  EXPECT_EQ(e.count(), 0u);
  EXPECT_DOUBLE_EQ(e.median_ns(), 0);
  EXPECT_TRUE(std::isinf(e.ci_half_width_percent()));
}

TEST(StatisticsTest, LargeValuesKeepPrecision) {
  // Mean/variance of 1e12-scale samples with unit spread (shifted two-pass).
  std::vector<int64_t> samples;
  for (int i = 0; i < 100; ++i) samples.push_back(1'000'000'000'000 + (i % 2));
  const v1::Statistics s = ComputeStatistics(samples);
  EXPECT_NEAR(s.mean_ns(), 1e12 + 0.5, 1e-3);
  EXPECT_NEAR(s.stddev_ns(), std::sqrt(0.25 * 100 / 99), 1e-6);
}

TEST(StatisticsTest, CiOfHundredSamplesUsesRanks40And61) {
  std::vector<int64_t> samples;
  for (int i = 100; i >= 1; --i) samples.push_back(i * 10);  // reverse order
  const v1::Statistics s = ComputeStatistics(samples);
  EXPECT_DOUBLE_EQ(s.median_ns(), 505);
  EXPECT_DOUBLE_EQ(s.ci_low_ns(), 400);   // x(40)
  EXPECT_DOUBLE_EQ(s.ci_high_ns(), 610);  // x(61)
  EXPECT_NEAR(s.ci_half_width_percent(), 100.0 * 105 / 505, 1e-9);
}

// Ranks of the 95% CI of the median, exact binomial (checked against scipy's
// binom.cdf and Le Boudec, Performance Evaluation, Table A.1).
struct RankCase {
  int64_t n;
  int64_t lower;
  int64_t upper;
  double coverage;
};

class MedianRanksTest : public ::testing::TestWithParam<RankCase> {};

TEST_P(MedianRanksTest, MatchesBinomialTable) {
  const RankCase c = GetParam();
  const MedianCiRanks r = MedianConfidenceRanks(c.n, 0.95);
  EXPECT_TRUE(r.achieved);
  EXPECT_EQ(r.lower, c.lower);
  EXPECT_EQ(r.upper, c.upper);
  EXPECT_NEAR(r.coverage, c.coverage, 1e-6);
}

INSTANTIATE_TEST_SUITE_P(
    BinomialTable, MedianRanksTest,
    ::testing::Values(RankCase{6, 1, 6, 0.96875}, RankCase{7, 1, 7, 0.984375},
                      RankCase{8, 1, 8, 0.9921875}, RankCase{9, 2, 8, 0.9609375},
                      RankCase{10, 2, 9, 0.978515625}, RankCase{20, 6, 15, 0.958610535},
                      RankCase{30, 10, 21, 0.957226055}, RankCase{50, 18, 33, 0.967160862},
                      RankCase{71, 27, 45, 0.968072838}, RankCase{100, 40, 61, 0.964799800},
                      RankCase{1000, 469, 532, 0.953708803}));

TEST(MedianRanksTest, NormalApproximationAboveExactRange) {
  // Le Boudec's formula floor(n/2 - 0.98·sqrt(n)); exact coverage from scipy.
  const MedianCiRanks r2000 = MedianConfidenceRanks(2000, 0.95);
  EXPECT_EQ(r2000.lower, 956);
  EXPECT_EQ(r2000.upper, 1045);
  EXPECT_TRUE(r2000.achieved);
  EXPECT_NEAR(r2000.coverage, 0.95345, 2e-3);  // normal approximation of the coverage
  const MedianCiRanks r10k = MedianConfidenceRanks(10000, 0.95);
  EXPECT_EQ(r10k.lower, 4902);
  EXPECT_EQ(r10k.upper, 5099);
  const MedianCiRanks r1001 = MedianConfidenceRanks(1001, 0.95);
  EXPECT_EQ(r1001.lower, 469);  // approximation: one rank wider than exact 470
}

TEST(MedianRanksTest, TooFewSamplesAndOddInputs) {
  for (int64_t n = 1; n <= 5; ++n) {
    const MedianCiRanks r = MedianConfidenceRanks(n, 0.95);
    EXPECT_FALSE(r.achieved) << n;
    EXPECT_EQ(r.lower, 1) << n;
    EXPECT_EQ(r.upper, n) << n;
  }
  EXPECT_EQ(MedianConfidenceRanks(0).lower, 0);
  EXPECT_EQ(MedianConfidenceRanks(-3).upper, 0);
  // Confidence is clamped; NaN becomes 0.5 (the narrowest interval).
  const MedianCiRanks nan = MedianConfidenceRanks(101, std::numeric_limits<double>::quiet_NaN());
  EXPECT_TRUE(nan.achieved);
  EXPECT_LE(nan.upper - nan.lower, 10);
  const MedianCiRanks high = MedianConfidenceRanks(101, 2.0);
  EXPECT_GE(high.coverage, 0.999999);
  // 99% is wider than 95%.
  EXPECT_LT(MedianConfidenceRanks(100, 0.99).lower, 40);
}

}  // namespace
}  // namespace fleetmark::engine
