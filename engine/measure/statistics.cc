#include "engine/measure/statistics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "engine/measure/verdict.h"

namespace fleetmark::engine {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
// Scale making the MAD a consistent estimator of the standard deviation of a normal
// distribution (1 / Φ⁻¹(3/4)); Rousseeuw & Croux, JASA 88 (1993).
constexpr double kMadToSigma = 1.4826;
constexpr double kOutlierSigmas = 3.0;

// Median of sorted values (mean of the middle two for even n). n >= 1.
double SortedMedian(const std::vector<double>& sorted) {
  const size_t n = sorted.size();
  if (n % 2 == 1) return sorted[n / 2];
  return sorted[n / 2 - 1] / 2 + sorted[n / 2] / 2;
}

// Standard normal CDF.
double NormalCdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

// z with NormalCdf(z) = p, p in (0.5, 1), by bisection (monotone; 60 steps reach
// double precision on [0, 10]).
double NormalQuantile(double p) {
  double lo = 0.0, hi = 10.0;
  for (int i = 0; i < 100; ++i) {
    const double mid = (lo + hi) / 2;
    (NormalCdf(mid) < p ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

// Normal approximation, with continuity correction, of the coverage of
// [x(l), x(n+1-l)]: 1 - 2·P(B <= l-1), P(B <= l-1) ≈ Φ((l - 0.5 - n/2) / (√n/2)).
double ApproximateCoverage(int64_t n, int64_t l) {
  const double z =
      (static_cast<double>(l) - 0.5 - static_cast<double>(n) / 2) / (std::sqrt(static_cast<double>(n)) / 2);
  return 1.0 - 2.0 * NormalCdf(z);
}

// [begin, end) offsets of each non-empty process (see ComputeHierarchicalStatistics).
std::vector<std::pair<size_t, size_t>> ProcessRanges(size_t n, absl::Span<const uint32_t> sizes) {
  std::vector<std::pair<size_t, size_t>> ranges;
  size_t at = 0;
  for (uint32_t size : sizes) {
    const size_t end = std::min(n, at + size);
    if (end > at) ranges.emplace_back(at, end);
    at = end;
  }
  if (at < n) ranges.emplace_back(at, n);
  return ranges;
}

// Median of `values` (reordered); n >= 1.
double MedianInPlace(std::vector<double>& values) {
  const size_t half = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + half, values.end());
  const double upper = values[half];
  if (values.size() % 2 == 1) return upper;
  const double lower = *std::max_element(values.begin(), values.begin() + half);
  return lower / 2 + upper / 2;
}

// The high 64 bits of the 128-bit product a·b, from 32-bit halves (32-bit ARM has no
// 128-bit integer type; Hacker's Delight, 2nd ed., 8-2).
uint64_t MulHigh64(uint64_t a, uint64_t b) {
  const uint64_t a_lo = a & 0xffffffffu, a_hi = a >> 32;
  const uint64_t b_lo = b & 0xffffffffu, b_hi = b >> 32;
  const uint64_t lo_lo = a_lo * b_lo, hi_lo = a_hi * b_lo, lo_hi = a_lo * b_hi, hi_hi = a_hi * b_hi;
  const uint64_t cross = (lo_lo >> 32) + (hi_lo & 0xffffffffu) + lo_hi;  // < 2^64: no overflow
  return hi_hi + (hi_lo >> 32) + (cross >> 32);
}

// Uniform index in [0, n) from one 64-bit draw (multiply-shift; the same on every
// platform, 32- or 64-bit, unlike std::uniform_int_distribution).
size_t DrawIndex(std::mt19937_64& rng, size_t n) {
  return static_cast<size_t>(MulHigh64(rng(), static_cast<uint64_t>(n)));
}

}  // namespace

MedianCiRanks MedianConfidenceRanks(int64_t n, double confidence) {
  MedianCiRanks ranks;
  if (n <= 0) return ranks;
  if (!(confidence >= 0.5)) confidence = 0.5;  // also catches NaN
  confidence = std::min(confidence, 0.999999);
  const bool exact = n <= kExactBinomialMaxN;
  if (exact) {
    // Largest l (1 <= l <= (n+1)/2) with coverage 1 - 2·P(B <= l-1) >= confidence.
    // P(B <= k) is accumulated from the pmf recurrence pmf(k+1) = pmf(k)·(n-k)/(k+1),
    // pmf(0) = 2^-n (no underflow for n <= kExactBinomialMaxN); coverage falls as l
    // grows, so the scan stops at the first l + 1 that misses.
    double pmf = std::ldexp(1.0, -static_cast<int>(n));
    double cdf = pmf;  // P(B <= l - 1) for l = 1
    int64_t l = 1;
    ranks.coverage = 1.0 - 2.0 * cdf;
    ranks.achieved = ranks.coverage >= confidence;
    while (ranks.achieved && l + 1 <= (n + 1) / 2) {
      pmf *= static_cast<double>(n - (l - 1)) / static_cast<double>(l);
      const double next = 1.0 - 2.0 * (cdf + pmf);
      if (next < confidence) break;
      cdf += pmf;
      ++l;
      ranks.coverage = next;
    }
    ranks.lower = l;
  } else {
    const double z = NormalQuantile(0.5 + confidence / 2);
    const double nd = static_cast<double>(n);
    int64_t l = static_cast<int64_t>(std::floor(nd / 2 - z * std::sqrt(nd) / 2));
    l = std::clamp<int64_t>(l, 1, (n + 1) / 2);
    ranks.lower = l;
    ranks.coverage = ApproximateCoverage(n, l);
    ranks.achieved = ranks.coverage >= confidence;
  }
  ranks.upper = n + 1 - ranks.lower;
  return ranks;
}

fleetmark::v1::Statistics ComputeStatistics(absl::Span<const int64_t> samples_ns) {
  fleetmark::v1::Statistics stats;
  const size_t n = samples_ns.size();
  stats.set_count(n);
  if (n == 0) {
    stats.set_ci_half_width_percent(kInfinity);
    return stats;
  }
  std::vector<double> sorted(samples_ns.begin(), samples_ns.end());
  std::sort(sorted.begin(), sorted.end());
  const double median = SortedMedian(sorted);
  stats.set_min_ns(sorted.front());
  stats.set_max_ns(sorted.back());
  stats.set_median_ns(median);

  // Mean and sample variance by two passes over values shifted by the minimum: the
  // shifted values are small and exact, so the ~1e12 ns magnitudes of long cases do
  // not cost precision (the shifted-data algorithm, Chan, Golub & LeVeque, "Algorithms
  // for computing the sample variance", The American Statistician 37, 1983).
  const double shift = sorted.front();
  double shifted_sum = 0.0;
  for (double x : sorted) shifted_sum += x - shift;
  const double shifted_mean = shifted_sum / static_cast<double>(n);
  double squares = 0.0;
  for (double x : sorted) {
    const double d = (x - shift) - shifted_mean;
    squares += d * d;
  }
  stats.set_mean_ns(shift + shifted_mean);
  stats.set_stddev_ns(n >= 2 ? std::sqrt(squares / static_cast<double>(n - 1)) : 0.0);

  std::vector<double> deviations(n);
  for (size_t i = 0; i < n; ++i) deviations[i] = std::fabs(sorted[i] - median);
  std::sort(deviations.begin(), deviations.end());
  const double mad = SortedMedian(deviations);
  stats.set_mad_ns(mad);
  uint64_t outliers = 0;
  if (mad > 0) {
    const double fence = kOutlierSigmas * kMadToSigma * mad;
    for (double d : deviations) outliers += d > fence ? 1 : 0;
  }
  stats.set_outliers(outliers);

  const MedianCiRanks ranks = MedianConfidenceRanks(static_cast<int64_t>(n), 0.95);
  const double low = sorted[ranks.lower - 1];
  const double high = sorted[ranks.upper - 1];
  stats.set_ci_low_ns(low);
  stats.set_ci_high_ns(high);
  double half_width_percent = kInfinity;
  if (ranks.achieved && median > 0) {
    half_width_percent = 100.0 * std::max(median - low, high - median) / median;
  }
  stats.set_ci_half_width_percent(half_width_percent);
  return stats;
}

fleetmark::v1::Statistics ComputeStatistics(const google::protobuf::RepeatedField<int64_t>& samples_ns) {
  return ComputeStatistics(absl::MakeConstSpan(samples_ns.data(), samples_ns.size()));
}

}  // namespace fleetmark::engine

namespace fleetmark::engine {

fleetmark::v1::Statistics ComputeHierarchicalStatistics(absl::Span<const int64_t> samples_ns,
                                                        absl::Span<const uint32_t> process_sizes, uint64_t seed) {
  fleetmark::v1::Statistics stats = ComputeStatistics(samples_ns);
  const auto ranges = ProcessRanges(samples_ns.size(), process_sizes);
  if (ranges.size() < 2) return stats;
  const size_t n = samples_ns.size();
  std::mt19937_64 rng(seed);
  std::vector<double> replicate;
  replicate.reserve(n + n / 2);
  std::vector<double> medians(kBootstrapReplicates);
  for (double& median : medians) {
    replicate.clear();
    for (size_t drawn = 0; drawn < ranges.size(); ++drawn) {
      const auto [begin, end] = ranges[DrawIndex(rng, ranges.size())];
      for (size_t i = begin; i < end; ++i) {
        replicate.push_back(static_cast<double>(samples_ns[begin + DrawIndex(rng, end - begin)]));
      }
    }
    median = MedianInPlace(replicate);
  }
  std::sort(medians.begin(), medians.end());
  // Percentile interval: the 2.5% and 97.5% order statistics of the replicates.
  const size_t b = medians.size();
  double low = medians[static_cast<size_t>(std::floor(0.025 * (b - 1)))];
  double high = medians[static_cast<size_t>(std::ceil(0.975 * (b - 1)))];
  // Small-sample correction (see the header): widened to the Student-t interval on
  // the process medians, mean ± t(0.975, k-1)·s/√k.
  const std::vector<double> process_medians = ProcessMedians(samples_ns, process_sizes);
  const StudentMean process_mean = StudentMeanOf(process_medians, 0.975);
  const double mean = process_mean.mean, t_half = process_mean.half_width;
  low = std::min(low, mean - t_half);
  high = std::max(high, mean + t_half);
  // The interval always holds the pooled median (a skewed bootstrap can miss it).
  const double median = stats.median_ns();
  stats.set_ci_low_ns(std::max(0.0, std::min(low, median)));
  stats.set_ci_high_ns(std::max(high, median));
  // The next invocation's median: sqrt(1/k + 1/k) = sqrt(2)/sqrt(k) (see the header).
  const double next_half = std::sqrt(2.0) * t_half;
  stats.set_next_low_ns(std::max(0.0, std::min(stats.ci_low_ns(), mean - next_half)));
  stats.set_next_high_ns(std::max(stats.ci_high_ns(), mean + next_half));
  double half_width_percent = kInfinity;
  if (n >= 6 && median > 0) {
    half_width_percent = 100.0 * std::max(median - stats.ci_low_ns(), stats.ci_high_ns() - median) / median;
  }
  stats.set_ci_half_width_percent(half_width_percent);
  return stats;
}

size_t ProcessCount(size_t n, absl::Span<const uint32_t> process_sizes, size_t min_size) {
  size_t count = 0;
  for (const auto& [begin, end] : ProcessRanges(n, process_sizes)) {
    if (end - begin >= std::max<size_t>(1, min_size)) ++count;
  }
  return count;
}

std::vector<double> ProcessMedians(absl::Span<const int64_t> samples_ns, absl::Span<const uint32_t> process_sizes) {
  std::vector<double> out;
  for (const auto& [begin, end] : ProcessRanges(samples_ns.size(), process_sizes)) {
    std::vector<double> values(samples_ns.begin() + begin, samples_ns.begin() + end);
    out.push_back(MedianInPlace(values));
  }
  return out;
}

double BetweenProcessShare(absl::Span<const int64_t> samples_ns, absl::Span<const uint32_t> process_sizes) {
  const auto ranges = ProcessRanges(samples_ns.size(), process_sizes);
  const size_t k = ranges.size();
  const size_t n_total = samples_ns.size();
  if (k < 2 || n_total <= k) return 0.0;
  // Shifted by the first sample, as ComputeStatistics does, to keep precision.
  const double shift = static_cast<double>(samples_ns[0]);
  double grand_sum = 0, squared_sizes = 0, ss_within = 0;
  std::vector<double> means(k);
  for (size_t g = 0; g < k; ++g) {
    const auto [begin, end] = ranges[g];
    double sum = 0;
    for (size_t i = begin; i < end; ++i) sum += static_cast<double>(samples_ns[i]) - shift;
    const double size = static_cast<double>(end - begin);
    means[g] = sum / size;
    grand_sum += sum;
    squared_sizes += size * size;
    for (size_t i = begin; i < end; ++i) {
      const double d = static_cast<double>(samples_ns[i]) - shift - means[g];
      ss_within += d * d;
    }
  }
  const double nd = static_cast<double>(n_total), kd = static_cast<double>(k);
  const double grand_mean = grand_sum / nd;
  double ss_between = 0;
  for (size_t g = 0; g < k; ++g) {
    const double d = means[g] - grand_mean;
    ss_between += static_cast<double>(ranges[g].second - ranges[g].first) * d * d;
  }
  const double ms_between = ss_between / (kd - 1);
  const double ms_within = ss_within / (nd - kd);
  const double n0 = (nd - squared_sizes / nd) / (kd - 1);
  const double between = n0 > 0 ? std::max(0.0, (ms_between - ms_within) / n0) : 0.0;
  const double total = between + ms_within;
  return total > 0 ? between / total : 0.0;
}

double Median(std::vector<double> values) { return values.empty() ? 0 : MedianInPlace(values); }

void WidenNextForRoundDrift(fleetmark::v1::Statistics& stats, double round_sigma) {
  const double median = stats.median_ns();
  if (!(round_sigma > 0) || !std::isfinite(round_sigma) || !(median > 0)) return;
  if (!(stats.next_low_ns() > 0) || !(stats.next_high_ns() > 0)) return;
  const double extra = kNextRoundQuantile * round_sigma;
  const double low = std::log(median / std::min(stats.next_low_ns(), median));
  const double high = std::log(std::max(stats.next_high_ns(), median) / median);
  stats.set_next_low_ns(median * std::exp(-std::hypot(low, extra)));
  stats.set_next_high_ns(median * std::exp(std::hypot(high, extra)));
}

}  // namespace fleetmark::engine
