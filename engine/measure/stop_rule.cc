#include "engine/measure/stop_rule.h"

#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "engine/measure/statistics.h"

namespace fleetmark::engine {

absl::StatusOr<StopRuleOptions> StopRuleOptionsFromSettings(
    const fleetmark::v1::MeasurementSettings& settings, const std::string& field_prefix) {
  StopRuleOptions options;
  const double target = settings.target_ci_percent();
  if (!std::isfinite(target) || target < 0 || target > 100) {
    return absl::InvalidArgumentError(
        absl::StrCat(field_prefix, ".target_ci_percent: 0 <= target_ci_percent <= 100, got ",
                     target));
  }
  options.target_ci_percent = target == 0 ? kDefaultTargetCiPercent : target;

  const int64_t max_reps = settings.max_repetitions();
  if (max_reps > kMaxRepetitionsCap) {
    return absl::InvalidArgumentError(absl::StrCat(
        field_prefix, ".max_repetitions: 0 <= max_repetitions <= ", kMaxRepetitionsCap,
        " (0 = ", kDefaultMaxRepetitions, "), got ", max_reps));
  }
  options.max_repetitions = max_reps == 0 ? kDefaultMaxRepetitions : max_reps;

  const int64_t min_reps = settings.min_repetitions();
  options.min_repetitions = min_reps == 0 ? kDefaultMinRepetitions : min_reps;
  if (options.min_repetitions > options.max_repetitions) {
    if (min_reps == 0) {
      // The default minimum exceeds an explicit small maximum: the maximum wins.
      options.min_repetitions = options.max_repetitions;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          field_prefix, ".min_repetitions: min_repetitions <= max_repetitions (",
          options.max_repetitions, "), got ", min_reps));
    }
  }

  const double max_seconds = settings.max_seconds_per_case();
  if (!std::isfinite(max_seconds) || max_seconds < 0 || max_seconds > kMaxSecondsPerCaseCap) {
    return absl::InvalidArgumentError(absl::StrCat(
        field_prefix, ".max_seconds_per_case: 0 <= max_seconds_per_case <= ",
        kMaxSecondsPerCaseCap, " (0 = ", kDefaultMaxSecondsPerCase, "), got ",
        max_seconds));
  }
  options.max_time =
      absl::Seconds(max_seconds == 0 ? kDefaultMaxSecondsPerCase : max_seconds);
  return options;
}

StopDecision DecideStop(absl::Span<const int64_t> samples_ns,
                        const StopRuleOptions& options, absl::Duration elapsed) {
  StopDecision decision;
  decision.stats = ComputeStatistics(samples_ns);
  const int64_t count = static_cast<int64_t>(samples_ns.size());
  const fleetmark::v1::Statistics& s = decision.stats;
  // ci_half_width_percent is +infinity until the CI is achieved (n >= 6).
  if (options.target_ci_percent > 0 && count >= options.min_repetitions &&
      std::isfinite(s.ci_half_width_percent()) &&
      s.ci_half_width_percent() <= options.target_ci_percent) {
    decision.stop = true;
    decision.reason = fleetmark::v1::STOP_REASON_CI_TARGET;
  } else if (count >= options.max_repetitions) {
    decision.stop = true;
    decision.reason = fleetmark::v1::STOP_REASON_MAX_REPETITIONS;
  } else if (count >= 1 && elapsed >= options.max_time) {
    decision.stop = true;
    decision.reason = fleetmark::v1::STOP_REASON_MAX_TIME;
  }
  return decision;
}

}  // namespace fleetmark::engine
