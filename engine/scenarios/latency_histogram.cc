#include "engine/scenarios/latency_histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace fleetmark::engine {
namespace {

absl::Duration FromNanos(uint64_t ns) {
  return absl::Nanoseconds(static_cast<int64_t>(std::min<uint64_t>(ns, INT64_MAX)));
}

}  // namespace

int LatencyHistogram::IndexOf(uint64_t ns) {
  if (ns < kSubBuckets) return static_cast<int>(ns);
  const int m = 63 - std::countl_zero(ns);                          // 2^m <= ns < 2^(m+1), m >= b
  const int shift = m - (kSubBucketBits - 1);                       // keep the top b bits
  const int sub = static_cast<int>(ns >> shift) - kSubBuckets / 2;  // 0..2^(b-1)-1
  return kSubBuckets + (m - kSubBucketBits) * (kSubBuckets / 2) + sub;
}

uint64_t LatencyHistogram::LowestOf(int index) {
  if (index < kSubBuckets) return static_cast<uint64_t>(index);
  const int rel = index - kSubBuckets;
  const int m = rel / (kSubBuckets / 2) + kSubBucketBits;
  const int sub = rel % (kSubBuckets / 2) + kSubBuckets / 2;
  return static_cast<uint64_t>(sub) << (m - (kSubBucketBits - 1));
}

uint64_t LatencyHistogram::HighestOf(int index) {
  if (index < kSubBuckets) return static_cast<uint64_t>(index);
  const int rel = index - kSubBuckets;
  const int m = rel / (kSubBuckets / 2) + kSubBucketBits;
  const uint64_t width = uint64_t{1} << (m - (kSubBucketBits - 1));
  return LowestOf(index) + (width - 1);
}

void LatencyHistogram::Record(absl::Duration latency) {
  if (latency < absl::ZeroDuration()) latency = absl::ZeroDuration();
  const int64_t ns = absl::ToInt64Nanoseconds(latency);  // saturates at int64 max
  RecordNanos(static_cast<uint64_t>(std::max<int64_t>(ns, 0)));
}

void LatencyHistogram::RecordNanos(uint64_t ns) {
  ++counts_[IndexOf(ns)];
  ++count_;
  sum_ns_ += static_cast<long double>(ns);
  min_ns_ = std::min(min_ns_, ns);
  max_ns_ = std::max(max_ns_, ns);
}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  for (int i = 0; i < kBuckets; ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  sum_ns_ += other.sum_ns_;
  min_ns_ = std::min(min_ns_, other.min_ns_);
  max_ns_ = std::max(max_ns_, other.max_ns_);
}

absl::Duration LatencyHistogram::Mean() const {
  if (count_ == 0) return absl::ZeroDuration();
  return absl::Nanoseconds(static_cast<double>(sum_ns_ / count_));
}

absl::Duration LatencyHistogram::Max() const { return count_ == 0 ? absl::ZeroDuration() : FromNanos(max_ns_); }

absl::Duration LatencyHistogram::Min() const { return count_ == 0 ? absl::ZeroDuration() : FromNanos(min_ns_); }

absl::Duration LatencyHistogram::Percentile(double percentile) const {
  if (count_ == 0) return absl::ZeroDuration();
  if (!(percentile >= 0)) percentile = 0;  // also NaN
  percentile = std::min(percentile, 100.0);
  // Rank of the sample at `percentile` (1-based, nearest-rank definition).
  uint64_t rank = static_cast<uint64_t>(std::ceil(percentile / 100.0 * count_));
  rank = std::clamp<uint64_t>(rank, 1, count_);
  uint64_t seen = 0;
  for (int i = 0; i < kBuckets; ++i) {
    seen += counts_[i];
    if (seen >= rank) {
      const uint64_t lo = LowestOf(i), hi = HighestOf(i);
      uint64_t mid = lo + (hi - lo) / 2;
      mid = std::clamp(mid, min_ns_, max_ns_);
      return FromNanos(mid);
    }
  }
  return Max();
}

}  // namespace fleetmark::engine
