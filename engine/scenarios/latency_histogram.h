// A log-linear latency histogram (the HdrHistogram layout: Gil Tene, HdrHistogram,
// "sub-bucket" scheme). Values below 2^b (b = kSubBucketBits) have one bucket each;
// above, each power-of-two range [2^m, 2^(m+1)) is split into 2^(b-1) equal buckets
// of width 2^(m-b+1), i.e. at most 2·v/2^b for a value v in it. Percentiles are
// reported at the bucket's midpoint, so they are within kRelativeError = 1/2^b of the
// true sample (values below 2^b are exact). Values are in nanoseconds; fixed memory (~60 KiB).
//
//   LatencyHistogram h;  h.Record(absl::Microseconds(870));
//   double p99_ms = absl::ToDoubleMilliseconds(h.Percentile(99.0));
//
// Not thread-safe: give each thread its own and Merge them.
#pragma once

#include <array>
#include <cstdint>

#include "absl/time/time.h"

namespace fleetmark::engine {

class LatencyHistogram {
 public:
  static constexpr int kSubBucketBits = 8;                               // 256 per octave
  static constexpr double kRelativeError = 1.0 / (1 << kSubBucketBits);  // 0.39%

  // Records one latency (negative values count as 0; values above ~292 years clamp).
  void Record(absl::Duration latency);
  void RecordNanos(uint64_t ns);
  void Merge(const LatencyHistogram& other);

  uint64_t count() const { return count_; }
  absl::Duration Mean() const;  // exact (from the running sum); zero if empty
  absl::Duration Max() const;   // exact; zero if empty
  absl::Duration Min() const;   // exact; zero if empty
  // The smallest recorded bucket value at or above `percentile` (0..100, clamped) of
  // the samples, as the bucket's midpoint (exact below 256 ns; clamped to [min, max]).
  // Zero if empty.
  absl::Duration Percentile(double percentile) const;

 private:
  static constexpr int kSubBuckets = 1 << kSubBucketBits;
  static constexpr int kBuckets = kSubBuckets + (64 - kSubBucketBits) * (kSubBuckets / 2);
  static int IndexOf(uint64_t ns);
  static uint64_t LowestOf(int index);
  static uint64_t HighestOf(int index);

  std::array<uint64_t, kBuckets> counts_{};
  uint64_t count_ = 0;
  long double sum_ns_ = 0;
  uint64_t min_ns_ = UINT64_MAX;
  uint64_t max_ns_ = 0;
};

}  // namespace fleetmark::engine
