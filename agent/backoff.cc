#include "agent/backoff.h"

#include <algorithm>
#include <cmath>

#include "absl/random/distributions.h"
#include "absl/strings/str_cat.h"

namespace fleetmark::agent {

absl::Status ValidateBackoffOptions(const BackoffOptions& options) {
  // The cap first, then what must fit under it: a bad cap is blamed on the cap.
  if (options.max_delay <= absl::ZeroDuration() || options.max_delay > absl::Hours(1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("backoff.max_delay: 0 < max_delay <= 1h, got ", absl::FormatDuration(options.max_delay)));
  }
  if (options.initial_delay <= absl::ZeroDuration() || options.initial_delay > options.max_delay) {
    return absl::InvalidArgumentError(absl::StrCat("backoff.initial_delay: 0 < initial_delay <= max_delay (",
                                                   absl::FormatDuration(options.max_delay), "), got ",
                                                   absl::FormatDuration(options.initial_delay)));
  }
  if (options.min_delay <= absl::ZeroDuration() || options.min_delay > options.initial_delay) {
    return absl::InvalidArgumentError(absl::StrCat("backoff.min_delay: 0 < min_delay <= initial_delay (",
                                                   absl::FormatDuration(options.initial_delay), "), got ",
                                                   absl::FormatDuration(options.min_delay)));
  }
  if (!(options.multiplier >= 1.0 && options.multiplier <= 10.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("backoff.multiplier: 1 <= multiplier <= 10, got ", options.multiplier));
  }
  return absl::OkStatus();
}

Backoff::Backoff(const BackoffOptions& options, absl::BitGenRef gen) : options_(options), gen_(gen) {}

absl::Duration Backoff::CurrentCeiling() const {
  // initial * multiplier^attempt, computed in seconds and clamped before converting
  // back so that a long outage cannot overflow.
  const double initial_s = absl::ToDoubleSeconds(options_.initial_delay);
  const double max_s = absl::ToDoubleSeconds(options_.max_delay);
  const double grown = initial_s * std::pow(options_.multiplier, static_cast<double>(attempt_));
  const double ceiling_s = std::isfinite(grown) ? std::min(grown, max_s) : max_s;
  return std::max(absl::Seconds(ceiling_s), options_.min_delay);
}

absl::Duration Backoff::NextDelay() {
  const double low_s = absl::ToDoubleSeconds(options_.min_delay);
  const double high_s = absl::ToDoubleSeconds(CurrentCeiling());
  if (attempt_ < 1000) ++attempt_;
  if (high_s <= low_s) return options_.min_delay;
  return absl::Seconds(absl::Uniform(absl::IntervalClosedClosed, gen_, low_s, high_s));
}

}  // namespace fleetmark::agent
