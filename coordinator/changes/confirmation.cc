#include "coordinator/changes/confirmation.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "coordinator/changes/change_points.h"
#include "engine/report/units.h"

namespace fleetmark::changes {

bool IsChangeState(const std::string& state) {
  return state == kSuspected || state == kConfirmed || state == kNotReproduced || state == kUnconfirmed;
}

std::optional<SuspectedChange> NewestPointStartsChange(const std::vector<double>& medians_ns,
                                                       const std::vector<size_t>& breaks, double noise) {
  if (medians_ns.empty()) return std::nullopt;
  const size_t newest = medians_ns.size() - 1;
  const double new_level = medians_ns[newest];
  if (!std::isfinite(new_level) || new_level <= 0) return std::nullopt;
  ChangePointOptions options;
  options.noise = std::isfinite(noise) && noise > 0 ? noise : 0;
  options.min_last_segment = 1;
  const std::vector<size_t> found = DetectChangePointsInSegments(medians_ns, breaks, options);
  if (std::find(found.begin(), found.end(), newest) == found.end()) return std::nullopt;
  size_t begin = 0;
  for (size_t i : found) {
    if (i < newest) begin = std::max(begin, i);
  }
  for (size_t b : breaks) {
    if (b < newest) begin = std::max(begin, b);
  }
  double log_sum = 0;
  int n = 0;
  for (size_t i = begin; i < newest; ++i) {
    if (std::isfinite(medians_ns[i]) && medians_ns[i] > 0) {
      log_sum += std::log(medians_ns[i]);
      ++n;
    }
  }
  if (n == 0) return std::nullopt;
  return SuspectedChange{std::exp(log_sum / n), new_level, MinRelativeChange(options)};
}

namespace {

std::string SignedPercent(double ratio) { return absl::StrFormat("%+.1f %%", 100 * (ratio - 1)); }

}  // namespace

ChangeVerdict JudgeConfirmation(double old_level_ns, double new_level_ns, double confirmation_ns, double noise) {
  ChangePointOptions options;
  options.noise = std::isfinite(noise) && noise > 0 ? noise : 0;
  const double threshold = MinRelativeChange(options);
  const double from_old = std::fabs(std::log(confirmation_ns) - std::log(old_level_ns));
  const double from_new = std::fabs(std::log(confirmation_ns) - std::log(new_level_ns));
  const bool confirmed = from_new < from_old && from_old >= std::log1p(threshold);
  ChangeVerdict verdict;
  verdict.state = confirmed ? kConfirmed : kNotReproduced;
  verdict.reason = absl::StrCat(
      "confirmation ", report::FormatNanos(confirmation_ns), ": ", SignedPercent(confirmation_ns / old_level_ns),
      " from the old level ", report::FormatNanos(old_level_ns),
      absl::StrFormat(" (a change is at least %.1f %%), ", 100 * threshold),
      SignedPercent(confirmation_ns / new_level_ns), " from the new level ", report::FormatNanos(new_level_ns));
  return verdict;
}

}  // namespace fleetmark::changes
