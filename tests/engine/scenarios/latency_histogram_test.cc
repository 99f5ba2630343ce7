#include "engine/scenarios/latency_histogram.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace fleetmark::engine {
namespace {

TEST(LatencyHistogramTest, EmptyIsZero) {
  LatencyHistogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.Percentile(99), absl::ZeroDuration());
  EXPECT_EQ(h.Mean(), absl::ZeroDuration());
}

TEST(LatencyHistogramTest, SmallValuesAreExact) {
  LatencyHistogram h;
  for (int ns = 1; ns <= 200; ++ns) h.RecordNanos(ns);
  EXPECT_EQ(h.Percentile(50), absl::Nanoseconds(100));
  EXPECT_EQ(h.Percentile(100), absl::Nanoseconds(200));
  EXPECT_EQ(h.Min(), absl::Nanoseconds(1));
}

// Every percentile is within kRelativeError of the exact nearest-rank sample.
TEST(LatencyHistogramTest, PercentilesWithinRelativeErrorBound) {
  std::mt19937_64 rng(42);
  std::lognormal_distribution<double> dist(std::log(2e6), 1.5);  // ~2 ms, wide tail
  std::vector<uint64_t> samples;
  LatencyHistogram h, a, b;
  for (int i = 0; i < 100000; ++i) {
    const uint64_t v = static_cast<uint64_t>(dist(rng)) + 1;
    samples.push_back(v);
    h.RecordNanos(v);
    (i % 2 ? a : b).RecordNanos(v);
  }
  a.Merge(b);
  std::sort(samples.begin(), samples.end());
  for (double p : {1.0, 50.0, 90.0, 95.0, 99.0, 99.9, 100.0}) {
    const size_t rank = static_cast<size_t>(std::ceil(p / 100 * samples.size()));
    const double exact = static_cast<double>(samples[std::max<size_t>(rank, 1) - 1]);
    const double got = absl::ToDoubleNanoseconds(h.Percentile(p));
    EXPECT_LE(std::abs(got - exact) / exact, LatencyHistogram::kRelativeError) << "p" << p;
    EXPECT_EQ(a.Percentile(p), h.Percentile(p)) << "merge changes p" << p;
  }
  EXPECT_EQ(h.Max(), absl::Nanoseconds(static_cast<int64_t>(samples.back())));
  EXPECT_EQ(h.count(), 100000u);
}

TEST(LatencyHistogramTest, HugeAndNegativeValuesDoNotCrash) {
  LatencyHistogram h;
  h.Record(-absl::Seconds(1));
  h.Record(absl::InfiniteDuration());
  h.RecordNanos(UINT64_MAX);
  EXPECT_EQ(h.count(), 3u);
  EXPECT_GT(h.Percentile(100), absl::Hours(24 * 365));
}

}  // namespace
}  // namespace fleetmark::engine
