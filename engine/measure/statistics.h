// Summary statistics of wall-time samples, including a distribution-free 95%
// confidence interval of the median, filling fleetmark.v1.Statistics.
//
//   fleetmark::v1::Statistics s = ComputeStatistics(result.samples_ns());
//   if (s.ci_half_width_percent() <= 2.0) { ... }
//
// Confidence interval of the median: order statistics with binomial ranks (Conover,
// "Practical Nonparametric Statistics", 3rd ed., 1999, §3.2 "confidence interval for
// a quantile"; also Hahn & Meeker, "Statistical Intervals", 1991, §5.2). For sorted
// samples x(1) <= ... <= x(n), [x(l), x(u)] with u = n + 1 - l covers the median with
// probability 1 - 2·P(B <= l - 1), B ~ Binomial(n, 1/2). For n <= kExactBinomialMaxN
// the largest l with coverage >= 95% is found from the exact binomial CDF; above it,
// the normal approximation l = floor(n/2 - z·sqrt(n)/2), u = n + 1 - l, z = 1.96 at
// 95% (Le Boudec,
// "Performance Evaluation of Computer and Communication Systems", EPFL Press 2010,
// Theorem 2.1 and Table A.1, which also tabulates the exact ranks). With n < 6 no
// pair of order statistics reaches 95% (even [x(1), x(n)] covers 1 - 2^(1-n) < 95%):
// the interval is then reported as [min, max] and the half-width as +infinity, so a
// stop rule never accepts it.
//
// Samples from several processes (hierarchical data: fresh processes differ in memory
// layout, ASLR, allocator and frequency state; Kalibera & Jones, "Rigorous benchmarking
// in reasonable time", ISMM 2013): the CI of the pooled median comes from a two-stage
// (hierarchical) bootstrap — resample the processes with replacement, then each drawn
// process's samples with replacement, take the pooled median of each replicate and the
// 2.5% / 97.5% percentiles of the replicates (Davison & Hinkley, "Bootstrap Methods and
// their Application", 1997, §3.8 "hierarchical data", both stages with replacement;
// Ren et al., "Nonparametric bootstrapping for hierarchical data", J. Applied
// Statistics 37, 2010). With few processes (k = 3 is the default) the percentile
// bootstrap undercovers: its replicates cannot reach past the extreme process medians,
// and the spread of k draws underestimates the spread between processes (Davison &
// Hinkley §3.8 note the same bias at the top stage). The interval is therefore the union of
// the percentile interval and the Student-t interval on the process medians,
// mean(m_i) ± t(0.975, k-1)·s(m_i)/√k, the top-level interval Kalibera & Jones (ISMM
// 2013, §4, "the t-distribution with k-1 degrees of freedom at the highest level")
// recommend; the bootstrap keeps the within-process variation when the k medians happen
// to agree. The between-process share of the variance is the one-way ANOVA
// variance-components estimate with the unbalanced n0 (Searle, Casella & McCulloch,
// "Variance Components", 1992, §3.5-3.6).
//
// The next invocation (next_low_ns/next_high_ns). A verdict is a claim about the next
// invocation, so a case also states where the next invocation's median should fall: the
// 95% prediction interval for the mean of a future sample of k process medians, given k
// of them now, mean(m_i) ± t(0.975, k-1)·s(m_i)·√(1/k + 1/k) (Hahn & Meeker,
// "Statistical Intervals", 1991, ch. 4, the prediction interval to contain the mean of a
// future sample; Hahn, "Factors for calculating two-sided prediction intervals for
// samples from a normal distribution", JASA 64, 1969) — the t part of the CI widened by
// √2 — joined with the CI. That covers the sampling of processes only. The next
// invocation also runs at another moment of the machine, which moves all its processes
// together; the run measures how far such moments move a process median — the round
// effects its groups share (verdict.h, RoundSpread: σ_r on the log scale) — and the
// runner widens the interval by them (WidenNextForRoundDrift): on the log scale around
// the median, each side's half-width h becomes sqrt(h² + (z·σ_r)²), z = 1.96 — a
// three-level model (moment, process, sample: Kalibera & Jones, "Rigorous benchmarking
// in reasonable time", ISMM 2013, levels of random effects). On the 2-core VM's five
// default invocations of plans/crossover.txtpb the interval held another invocation's
// median in 86.6 % of 1600 pairs without the widening and 95.8 % with it (quick: 83.9 %
// and 95.3 %; tests/bench/verdict_repro.py). A machine that changed more than its own
// rounds showed (other work) is what the run's contention marking reports.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "fleetmark/v1/result.pb.h"

namespace fleetmark::engine {

// Up to this n the CI ranks come from the exact binomial distribution; above it from
// the normal approximation (they agree to within one rank there).
inline constexpr int64_t kExactBinomialMaxN = 1000;

// Ranks (1-based, into the sorted samples) of a distribution-free confidence interval
// of the median.
struct MedianCiRanks {
  int64_t lower = 0;      // l; 0 when n == 0
  int64_t upper = 0;      // u = n + 1 - l
  double coverage = 0.0;  // exact binomial coverage of [x(l), x(u)] (1 - 2·P(B <= l-1))
  bool achieved = false;  // coverage >= the requested confidence (false when n < 6 at 95%)
};

// Returns the ranks of the narrowest symmetric order-statistic interval whose
// coverage is at least `confidence` (in (0, 1); values outside are clamped to
// [0.5, 0.999999]). For n where no interval reaches it, returns l = 1, u = n with
// achieved = false. Pure, thread-safe.
MedianCiRanks MedianConfidenceRanks(int64_t n, double confidence = 0.95);

// Computes every field of Statistics from `samples_ns` (any order; not modified):
//   count, min/median/max (median of an even count = mean of the two middle values),
//   mean, stddev (sample, n - 1 denominator; 0 for n < 2), mad (median of
//   |x - median|, unscaled), outliers (samples outside median ± 3·1.4826·MAD; 0 when
//   MAD == 0), ci_low/ci_high (see above), ci_half_width_percent =
//   100 · max(median - ci_low, ci_high - median) / median (+infinity when the CI is
//   not achieved or the median is 0).
// Empty input gives count = 0 and all other fields 0 (half-width +infinity).
// Pure, thread-safe; O(n log n) time, O(n) extra memory.
fleetmark::v1::Statistics ComputeStatistics(absl::Span<const int64_t> samples_ns);

// Same, from the repeated field of a CaseResult.
fleetmark::v1::Statistics ComputeStatistics(const google::protobuf::RepeatedField<int64_t>& samples_ns);

// Bootstrap replicates of ComputeHierarchicalStatistics.
inline constexpr int kBootstrapReplicates = 1000;

// `samples_ns` cut into consecutive processes of `process_sizes[i]` samples each (zero
// sizes are skipped; samples past the sizes' sum form one more process, sizes past the
// end are cut short). With two or more processes, every field is ComputeStatistics's
// except ci_low/ci_high/ci_half_width_percent, which come from the two-stage bootstrap
// widened to the process-level t interval above (kBootstrapReplicates replicates, std::mt19937_64 seeded with `seed`:
// the same input and seed give the same CI on every platform); the half-width is +infinity below 6 samples; and
// next_low_ns/next_high_ns, the prediction interval of the next invocation's median (above). With one
// process it equals ComputeStatistics(samples_ns) (next_* stay 0: unknown). Pure, thread-safe; O(kBootstrapReplicates ·
// n) time, O(n) extra memory.
fleetmark::v1::Statistics ComputeHierarchicalStatistics(absl::Span<const int64_t> samples_ns,
                                                        absl::Span<const uint32_t> process_sizes, uint64_t seed);

// Widens next_low_ns/next_high_ns of `stats` by the run's round effects (above):
// each side's log half-width around median_ns combined in quadrature with
// kNextRoundQuantile · round_sigma. No change when next_* are 0 (one process: unknown),
// the median is not positive or round_sigma is not positive and finite. Pure.
inline constexpr double kNextRoundQuantile = 1.96;  // the normal 97.5 % quantile
void WidenNextForRoundDrift(fleetmark::v1::Statistics& stats, double round_sigma);

// The number of processes `n` samples are cut into (same cutting as above) that hold
// at least max(1, min_size) samples.
size_t ProcessCount(size_t n, absl::Span<const uint32_t> process_sizes, size_t min_size = 1);

// The median of each process (same cutting as above), in order; empty for no samples.
std::vector<double> ProcessMedians(absl::Span<const int64_t> samples_ns, absl::Span<const uint32_t> process_sizes);

// The median of `values` (the mean of the middle two for an even count); 0 for none.
// Pure, thread-safe; O(n).
double Median(std::vector<double> values);

// Between-process share of the variance, sigma_b^2 / (sigma_b^2 + sigma_w^2) in [0, 1]
// (an intraclass correlation), from the one-way ANOVA estimates sigma_w^2 = MSW and
// sigma_b^2 = max(0, (MSB - MSW) / n0), n0 = (N - sum n_i^2 / N) / (k - 1). 0 when it
// cannot be estimated: fewer than two processes, N - k < 1, or no variance at all.
// Pure, thread-safe; O(n).
double BetweenProcessShare(absl::Span<const int64_t> samples_ns, absl::Span<const uint32_t> process_sizes);

}  // namespace fleetmark::engine
