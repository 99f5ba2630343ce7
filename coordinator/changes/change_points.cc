#include "coordinator/changes/change_points.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace fleetmark::changes {
namespace {

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  double lower = *std::max_element(values.begin(), values.begin() + mid);
  return (lower + upper) / 2;
}

// Prefix sums give each segment's sum of squared deviations in O(1).
class SegmentCost {
 public:
  explicit SegmentCost(const std::vector<double>& x) : sum_(x.size() + 1, 0), sum_sq_(x.size() + 1, 0) {
    for (size_t i = 0; i < x.size(); ++i) {
      sum_[i + 1] = sum_[i] + x[i];
      sum_sq_[i + 1] = sum_sq_[i] + x[i] * x[i];
    }
  }
  // Cost of x[begin, end).
  double Cost(size_t begin, size_t end) const {
    const double n = static_cast<double>(end - begin);
    const double s = sum_[end] - sum_[begin];
    return std::max(0.0, (sum_sq_[end] - sum_sq_[begin]) - s * s / n);
  }
  double Mean(size_t begin, size_t end) const { return (sum_[end] - sum_[begin]) / static_cast<double>(end - begin); }

 private:
  std::vector<double> sum_;
  std::vector<double> sum_sq_;
};

void Split(const SegmentCost& cost, size_t begin, size_t end, size_t series_end, double penalty,
           const ChangePointOptions& options, std::vector<size_t>& out) {
  const size_t m = options.min_segment;
  const size_t m_right = end == series_end ? options.min_last_segment : m;
  if (end - begin < m + m_right) return;
  const double whole = cost.Cost(begin, end);
  double best_gain = 0;
  size_t best = 0;
  for (size_t k = begin + m; k + m_right <= end; ++k) {
    const double gain = whole - cost.Cost(begin, k) - cost.Cost(k, end);
    if (gain > best_gain) {
      best_gain = gain;
      best = k;
    }
  }
  if (best == 0 || best_gain <= penalty) return;
  const double shift = std::fabs(cost.Mean(begin, best) - cost.Mean(best, end));
  if (shift < std::log1p(options.min_relative_change)) return;
  Split(cost, begin, best, series_end, penalty, options, out);
  out.push_back(best);
  Split(cost, best, end, series_end, penalty, options, out);
}

}  // namespace

double MinRelativeChange(const ChangePointOptions& options) {
  const double noise = std::isfinite(options.noise) && options.noise > 0 ? options.noise : 0;
  return std::max(options.min_relative_change, kNoiseChangeMultiple * noise);
}

std::vector<size_t> FingerprintBreaks(const std::vector<std::string>& hashes) {
  std::vector<size_t> breaks;
  const std::string* last_known = nullptr;
  for (size_t i = 0; i < hashes.size(); ++i) {
    if (hashes[i].empty()) continue;
    if (last_known != nullptr && *last_known != hashes[i]) breaks.push_back(i);
    last_known = &hashes[i];
  }
  return breaks;
}

std::vector<size_t> DetectChangePoints(const std::vector<double>& medians, const ChangePointOptions& options) {
  std::vector<double> x;
  std::vector<size_t> index;  // position in `medians` of each usable point
  for (size_t i = 0; i < medians.size(); ++i) {
    if (std::isfinite(medians[i]) && medians[i] > 0) {
      x.push_back(std::log(medians[i]));
      index.push_back(i);
    }
  }
  const double noise = std::isfinite(options.noise) && options.noise > 0 ? options.noise : 0;
  ChangePointOptions opts;
  opts.min_segment = std::max<size_t>(1, options.min_segment);
  opts.min_relative_change = MinRelativeChange(options);
  opts.noise = noise;
  opts.min_last_segment = options.min_last_segment == 0 ? opts.min_segment : options.min_last_segment;
  if (x.size() < opts.min_segment + opts.min_last_segment) return {};
  std::vector<double> diffs;
  for (size_t i = 1; i < x.size(); ++i) diffs.push_back(x[i] - x[i - 1]);
  const double diff_median = Median(diffs);
  for (double& d : diffs) d = std::fabs(d - diff_median);
  double sigma = Median(diffs) / (0.6745 * std::sqrt(2.0));
  // Floor: a series quieter than 0.1% is treated as 0.1% noise; nor quieter than its
  // device's noise score.
  sigma = std::max({sigma, 1e-3, noise});
  const double penalty = 2.0 * sigma * sigma * std::log(static_cast<double>(x.size()));
  SegmentCost cost(x);
  std::vector<size_t> found;
  Split(cost, 0, x.size(), x.size(), penalty, opts, found);
  std::vector<size_t> out;
  for (size_t k : found) out.push_back(index[k]);
  return out;
}

std::vector<size_t> DetectChangePointsInSegments(const std::vector<double>& medians, const std::vector<size_t>& breaks,
                                                 const ChangePointOptions& options) {
  std::vector<size_t> out;
  size_t begin = 0;
  std::vector<size_t> ends;
  for (size_t b : breaks) {
    if (b > begin && b < medians.size()) ends.push_back(b);
  }
  ends.push_back(medians.size());
  ChangePointOptions inner = options;
  inner.min_last_segment = 0;  // only the series' last piece ends at its newest point
  for (size_t end : ends) {
    if (end <= begin) continue;
    const std::vector<double> piece(medians.begin() + begin, medians.begin() + end);
    for (size_t i : DetectChangePoints(piece, end == medians.size() ? options : inner)) out.push_back(begin + i);
    begin = end;
  }
  return out;
}

}  // namespace fleetmark::changes
