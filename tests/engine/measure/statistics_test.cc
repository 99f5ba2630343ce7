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
  EXPECT_DOUBLE_EQ(s.mad_ns(), 1);                    // |d| = {2,1,0,1,2} -> median 1
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

INSTANTIATE_TEST_SUITE_P(BinomialTable, MedianRanksTest,
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

// Samples of consecutive processes: process p has `per_process` samples around
// means[p], spread by a deterministic ±`noise` pattern (no random source).
std::vector<int64_t> ProcessSamples(const std::vector<int64_t>& means, int per_process, int64_t noise,
                                    std::vector<uint32_t>* sizes) {
  std::vector<int64_t> v;
  for (int64_t mean : means) {
    for (int i = 0; i < per_process; ++i) v.push_back(mean + (i * 7919) % (2 * noise + 1) - noise);
    sizes->push_back(static_cast<uint32_t>(per_process));
  }
  return v;
}

TEST(HierarchicalStatisticsTest, BetweenProcessEffectWidensTheCiToCoverTheProcesses) {
  // Three processes whose levels differ far more than their samples do: 1000, 1010 and
  // 1200 ns, each ±5 ns. Their mean, 1070 ns, is what another run's processes scatter
  // around; the pooled order-statistic CI sits tightly at the pooled median (~1010)
  // and covers neither it nor the outer processes.
  std::vector<uint32_t> sizes;
  const std::vector<int64_t> v = ProcessSamples({1000, 1010, 1200}, 200, 5, &sizes);
  const v1::Statistics pooled = ComputeStatistics(v);
  const v1::Statistics hier = ComputeHierarchicalStatistics(v, sizes, 42);
  const double process_mean = (1000.0 + 1010.0 + 1200.0) / 3;
  EXPECT_GT(pooled.ci_low_ns(), 1000);
  EXPECT_LT(pooled.ci_high_ns(), process_mean);
  EXPECT_LE(hier.ci_low_ns(), 1005);   // covers the lowest process ...
  EXPECT_GE(hier.ci_high_ns(), 1195);  // ... and the highest
  EXPECT_LE(hier.ci_low_ns(), process_mean);
  EXPECT_GE(hier.ci_high_ns(), process_mean);
  EXPECT_GT(hier.ci_half_width_percent(), 5 * pooled.ci_half_width_percent());
  // Only the CI differs: the median and the other fields are the pooled samples'.
  EXPECT_EQ(hier.median_ns(), pooled.median_ns());
  EXPECT_EQ(hier.count(), pooled.count());
  EXPECT_EQ(hier.mad_ns(), pooled.mad_ns());
  EXPECT_EQ(hier.stddev_ns(), pooled.stddev_ns());
  EXPECT_GT(BetweenProcessShare(v, sizes), 0.95);
  const std::vector<double> medians = ProcessMedians(v, sizes);
  ASSERT_EQ(medians.size(), 3u);
  EXPECT_NEAR(medians[0], 1000, 5);
  EXPECT_NEAR(medians[1], 1010, 5);
  EXPECT_NEAR(medians[2], 1200, 5);
}

TEST(HierarchicalStatisticsTest, NoBetweenProcessEffectKeepsTheCiNarrow) {
  // The same level in every process: the hierarchical CI stays within the target a
  // pooled CI would reach (±1%), and the between-process share is about 0.
  std::vector<uint32_t> sizes;
  const std::vector<int64_t> v = ProcessSamples({1000, 1000, 1000}, 200, 5, &sizes);
  const v1::Statistics hier = ComputeHierarchicalStatistics(v, sizes, 7);
  EXPECT_LT(hier.ci_half_width_percent(), 1.0);
  EXPECT_LE(hier.ci_low_ns(), hier.median_ns());
  EXPECT_GE(hier.ci_high_ns(), hier.median_ns());
  EXPECT_LT(BetweenProcessShare(v, sizes), 0.05);
}

TEST(HierarchicalStatisticsTest, OneProcessFallsBackToThePooledCi) {
  const std::vector<int64_t> v = {5, 1, 4, 2, 3, 9, 7, 8, 6, 10, 12, 11};
  const v1::Statistics pooled = ComputeStatistics(v);
  for (const std::vector<uint32_t>& sizes : {std::vector<uint32_t>{}, std::vector<uint32_t>{12},
                                             std::vector<uint32_t>{0, 12, 0}, std::vector<uint32_t>{40}}) {
    const v1::Statistics s = ComputeHierarchicalStatistics(v, sizes, 1);
    EXPECT_EQ(s.SerializeAsString(), pooled.SerializeAsString());
    EXPECT_EQ(BetweenProcessShare(v, sizes), 0.0);
    EXPECT_EQ(ProcessCount(v.size(), sizes), 1u);
  }
  EXPECT_EQ(ComputeHierarchicalStatistics({}, {3, 4}, 1).count(), 0u);
  EXPECT_TRUE(std::isinf(ComputeHierarchicalStatistics({}, {3, 4}, 1).ci_half_width_percent()));
}

TEST(HierarchicalStatisticsTest, CutsSamplesByTheSizes) {
  // Zero sizes are skipped, samples past the sizes' sum are one more process, sizes
  // past the end are cut short.
  EXPECT_EQ(ProcessCount(10, {3, 0, 3}), 3u);
  EXPECT_EQ(ProcessCount(10, {3, 100}), 2u);
  EXPECT_EQ(ProcessCount(10, {3, 1, 6}, 3), 2u);  // the 1-sample process is too small
  EXPECT_EQ(ProcessCount(10, {3, 0, 3}, 0), 3u);  // 0 means 1
  const std::vector<int64_t> v = {1, 2, 3, 10, 20, 30, 40};
  EXPECT_EQ(ProcessMedians(v, {3, 0}), (std::vector<double>{2, 25}));
  EXPECT_TRUE(ProcessMedians({}, {3}).empty());
  // Under 6 samples no CI is claimed, whatever the processes.
  EXPECT_TRUE(std::isinf(ComputeHierarchicalStatistics({1, 2, 3, 4, 5}, {2, 3}, 1).ci_half_width_percent()));
}

TEST(HierarchicalStatisticsTest, ThreeProcessesGetTheStudentTInterval) {
  // k = 3 processes at 1000, 1020 and 1040 ns (±2 ns): the percentile bootstrap alone
  // stays inside [1000, 1040]; the process-level t interval is
  // 1020 ± t(0.975, 2) · 20 / √3 = 1020 ± 4.3027 · 11.547 = [970.3, 1069.7].
  std::vector<uint32_t> sizes;
  const std::vector<int64_t> v = ProcessSamples({1000, 1020, 1040}, 200, 2, &sizes);
  const v1::Statistics hier = ComputeHierarchicalStatistics(v, sizes, 42);
  const std::vector<double> m = ProcessMedians(v, sizes);
  ASSERT_EQ(m.size(), 3u);
  const double mean = (m[0] + m[1] + m[2]) / 3;
  const double s =
      std::sqrt(((m[0] - mean) * (m[0] - mean) + (m[1] - mean) * (m[1] - mean) + (m[2] - mean) * (m[2] - mean)) / 2);
  EXPECT_NEAR(hier.ci_low_ns(), mean - 4.3026527297 * s / std::sqrt(3.0), 1e-6);
  EXPECT_NEAR(hier.ci_high_ns(), mean + 4.3026527297 * s / std::sqrt(3.0), 1e-6);
  EXPECT_LT(hier.ci_low_ns(), 971);
  EXPECT_GT(hier.ci_high_ns(), 1069);
  // Eleven processes: t(0.975, 10) = 2.228139.
  sizes.clear();
  const std::vector<int64_t> w =
      ProcessSamples({1000, 1010, 1020, 1030, 1040, 1050, 1060, 1070, 1080, 1090, 1100}, 50, 0, &sizes);
  const v1::Statistics eleven = ComputeHierarchicalStatistics(w, sizes, 3);
  const double s11 = std::sqrt(11000.0 / 10);  // sum of squared deviations 2·(50²+40²+30²+20²+10²) = 11000
  // (here the bootstrap is the wider of the two at the top: the union keeps it)
  EXPECT_GE(eleven.ci_high_ns(), 1050 + 2.228139 * s11 / std::sqrt(11.0) - 1e-9);
  EXPECT_LE(eleven.ci_low_ns(), 1050 - 2.228139 * s11 / std::sqrt(11.0) + 1e-9);
}

TEST(HierarchicalStatisticsTest, NextInvocationGetsThePredictionInterval) {
  // k = 3 process medians 1000, 1020, 1040 (s = 20): the next invocation's median, over 3
  // processes too, is predicted within 1020 ± t(0.975, 2) · 20 · √(1/3 + 1/3) =
  // 1020 ± 4.3027 · 16.330 = [949.7, 1090.3] — the CI's t part (±49.7) times √2.
  std::vector<uint32_t> sizes;
  const std::vector<int64_t> v = ProcessSamples({1000, 1020, 1040}, 200, 0, &sizes);
  const v1::Statistics hier = ComputeHierarchicalStatistics(v, sizes, 42);
  EXPECT_NEAR(hier.next_low_ns(), 1020 - 4.3026527297 * 20 * std::sqrt(2.0 / 3), 1e-6);
  EXPECT_NEAR(hier.next_high_ns(), 1020 + 4.3026527297 * 20 * std::sqrt(2.0 / 3), 1e-6);
  EXPECT_LT(hier.next_low_ns(), hier.ci_low_ns());
  EXPECT_GT(hier.next_high_ns(), hier.ci_high_ns());
  // Processes that agree exactly: no wider than the CI (the union keeps the CI).
  sizes.clear();
  const std::vector<int64_t> same = ProcessSamples({1000, 1000, 1000}, 50, 3, &sizes);
  const v1::Statistics flat = ComputeHierarchicalStatistics(same, sizes, 7);
  EXPECT_EQ(flat.next_low_ns(), flat.ci_low_ns());
  EXPECT_EQ(flat.next_high_ns(), flat.ci_high_ns());
  // One process predicts nothing: 0 and 0 (unknown).
  const v1::Statistics one = ComputeHierarchicalStatistics(v, {static_cast<uint32_t>(v.size())}, 1);
  EXPECT_EQ(one.next_low_ns(), 0);
  EXPECT_EQ(one.next_high_ns(), 0);
}

TEST(HierarchicalStatisticsTest, RoundDriftWidensTheNextInvocationInQuadrature) {
  // median 100, next [90, 110], round spread 5 %: each side's log half-width combines
  // with 1.96 x 0.05 = 0.098 in quadrature (ln(100/90) = 0.10536, ln(1.1) = 0.09531).
  v1::Statistics s;
  s.set_median_ns(100);
  s.set_next_low_ns(90);
  s.set_next_high_ns(110);
  WidenNextForRoundDrift(s, 0.05);
  EXPECT_NEAR(s.next_low_ns(), 100 * std::exp(-std::hypot(std::log(100.0 / 90), 0.098)), 1e-9);
  EXPECT_NEAR(s.next_high_ns(), 100 * std::exp(std::hypot(std::log(1.1), 0.098)), 1e-9);
  EXPECT_LT(s.next_low_ns(), 87);
  EXPECT_GT(s.next_high_ns(), 114);
  // Nothing to widen: unknown next interval (one process), no spread, a bad spread.
  v1::Statistics one;
  one.set_median_ns(100);
  WidenNextForRoundDrift(one, 0.05);
  EXPECT_EQ(one.next_low_ns(), 0);
  EXPECT_EQ(one.next_high_ns(), 0);
  v1::Statistics same = s;
  WidenNextForRoundDrift(same, 0);
  WidenNextForRoundDrift(same, std::numeric_limits<double>::quiet_NaN());
  WidenNextForRoundDrift(same, -1);
  EXPECT_EQ(same.next_low_ns(), s.next_low_ns());
  EXPECT_EQ(same.next_high_ns(), s.next_high_ns());
}

TEST(HierarchicalStatisticsTest, DeterministicGivenTheSeed) {
  // Process levels close together, so the t interval (small spread of the process
  // medians) does not hide the bootstrap's draws.
  std::vector<uint32_t> sizes;
  const std::vector<int64_t> v = ProcessSamples({1000, 1003, 997, 1001}, 37, 30, &sizes);
  const v1::Statistics a = ComputeHierarchicalStatistics(v, sizes, 12345);
  const v1::Statistics b = ComputeHierarchicalStatistics(v, sizes, 12345);
  EXPECT_EQ(a.SerializeAsString(), b.SerializeAsString());
  // Another seed draws other replicates (the interval moves a little, not the median).
  bool some_differ = false;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    const v1::Statistics c = ComputeHierarchicalStatistics(v, sizes, seed);
    EXPECT_EQ(c.median_ns(), a.median_ns());
    some_differ |= c.ci_low_ns() != a.ci_low_ns() || c.ci_high_ns() != a.ci_high_ns();
  }
  EXPECT_TRUE(some_differ);
}

TEST(HierarchicalStatisticsTest, BetweenProcessShareHandComputed) {
  // Processes {1, 3} and {5, 7}: MSB = 16, MSW = 2, n0 = 2, sigma_b^2 = 7, share 7/9.
  EXPECT_NEAR(BetweenProcessShare({1, 3, 5, 7}, {2, 2}), 7.0 / 9.0, 1e-12);
  // No within-process samples to estimate sigma_w from: not estimable.
  EXPECT_EQ(BetweenProcessShare({1, 5}, {1, 1}), 0.0);
  // Identical samples: no variance at all.
  EXPECT_EQ(BetweenProcessShare({4, 4, 4, 4}, {2, 2}), 0.0);
  // Large values keep precision (shifted sums).
  const int64_t big = int64_t{1} << 50;
  EXPECT_NEAR(BetweenProcessShare({big + 1, big + 3, big + 5, big + 7}, {2, 2}), 7.0 / 9.0, 1e-9);
}

}  // namespace
}  // namespace fleetmark::engine
