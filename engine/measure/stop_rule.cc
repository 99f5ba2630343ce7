#include "engine/measure/stop_rule.h"

#include <algorithm>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "engine/measure/statistics.h"

namespace fleetmark::engine {

absl::StatusOr<StopRuleOptions> StopRuleOptionsFromSettings(const fleetmark::v1::MeasurementSettings& settings,
                                                            const std::string& field_prefix) {
  StopRuleOptions options;
  const double target = settings.target_ci_percent();
  if (!std::isfinite(target) || target < 0 || target > 100) {
    return absl::InvalidArgumentError(
        absl::StrCat(field_prefix, ".target_ci_percent: 0 <= target_ci_percent <= 100, got ", target));
  }
  options.target_ci_percent = target == 0 ? kDefaultTargetCiPercent : target;

  const int64_t max_reps = settings.max_repetitions();
  if (max_reps > kMaxRepetitionsCap) {
    return absl::InvalidArgumentError(absl::StrCat(field_prefix,
                                                   ".max_repetitions: 0 <= max_repetitions <= ", kMaxRepetitionsCap,
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
      return absl::InvalidArgumentError(absl::StrCat(field_prefix,
                                                     ".min_repetitions: min_repetitions <= max_repetitions (",
                                                     options.max_repetitions, "), got ", min_reps));
    }
  }

  const double max_seconds = settings.max_seconds_per_case();
  if (!std::isfinite(max_seconds) || max_seconds < 0 || max_seconds > kMaxSecondsPerCaseCap) {
    return absl::InvalidArgumentError(
        absl::StrCat(field_prefix, ".max_seconds_per_case: 0 <= max_seconds_per_case <= ", kMaxSecondsPerCaseCap,
                     " (0 = ", kDefaultMaxSecondsPerCase, "), got ", max_seconds));
  }
  options.max_time = absl::Seconds(max_seconds == 0 ? kDefaultMaxSecondsPerCase : max_seconds);
  const uint32_t processes = settings.processes();
  if (processes > kMaxProcesses) {
    return absl::InvalidArgumentError(absl::StrCat(field_prefix, ".processes: 1 <= processes <= ", kMaxProcesses,
                                                   " (0 = ", kDefaultProcesses, "), got ", processes));
  }
  options.processes = processes == 0 ? kDefaultProcesses : processes;
  const double min_seconds = settings.min_seconds_per_case();
  const double max_resolved = absl::ToDoubleSeconds(options.max_time);
  if (!std::isfinite(min_seconds) || min_seconds < 0 || min_seconds > max_resolved) {
    return absl::InvalidArgumentError(absl::StrCat(field_prefix,
                                                   ".min_seconds_per_case: 0 <= min_seconds_per_case <= "
                                                   "max_seconds_per_case (",
                                                   max_resolved, ") (0 = ", kDefaultMinSecondsPerCase, "), got ",
                                                   min_seconds));
  }
  options.min_time = absl::Seconds(min_seconds == 0 ? std::min(kDefaultMinSecondsPerCase, max_resolved) : min_seconds);
  return options;
}

namespace {

// The rule of both DecideStop overloads, on statistics already computed.
StopDecision Decide(fleetmark::v1::Statistics stats, bool enough_processes, const StopRuleOptions& options,
                    absl::Duration elapsed) {
  StopDecision decision;
  decision.stats = std::move(stats);
  const fleetmark::v1::Statistics& s = decision.stats;
  const int64_t count = static_cast<int64_t>(s.count());
  // ci_half_width_percent is +infinity until the CI is achieved (n >= 6).
  if (options.target_ci_percent > 0 && enough_processes && count >= options.min_repetitions &&
      elapsed >= options.min_time && std::isfinite(s.ci_half_width_percent()) &&
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

}  // namespace

StopDecision DecideStop(absl::Span<const int64_t> samples_ns, const StopRuleOptions& options, absl::Duration elapsed) {
  return Decide(ComputeStatistics(samples_ns), true, options, elapsed);
}

StopDecision DecideStop(absl::Span<const int64_t> samples_ns, absl::Span<const uint32_t> process_sizes,
                        const StopRuleOptions& options, absl::Duration elapsed) {
  if (options.processes <= 1) return DecideStop(samples_ns, options, elapsed);
  const int64_t processes = static_cast<int64_t>(ProcessCount(
      samples_ns.size(), process_sizes, static_cast<size_t>(std::max<int64_t>(1, options.min_process_repetitions))));
  return Decide(ComputeHierarchicalStatistics(samples_ns, process_sizes, options.bootstrap_seed),
                processes >= options.processes, options, elapsed);
}

DriftCheck DetectDrift(absl::Span<const int64_t> samples_ns, double tolerance_percent) {
  DriftCheck check;
  const size_t n = samples_ns.size();
  if (n < 2 * kMinDriftHalf) return check;
  check.checked = true;
  const fleetmark::v1::Statistics first = ComputeStatistics(samples_ns.first(n / 2));
  const fleetmark::v1::Statistics second = ComputeStatistics(samples_ns.subspan(n / 2));
  check.first_median_ns = first.median_ns();
  check.second_median_ns = second.median_ns();
  const double whole = ComputeStatistics(samples_ns).median_ns();
  const double tolerance =
      tolerance_percent > 0 ? std::max(tolerance_percent, kMinDriftTolerancePercent) : kDefaultTargetCiPercent;
  const bool disjoint = first.ci_high_ns() < second.ci_low_ns() || second.ci_high_ns() < first.ci_low_ns();
  check.drifting =
      disjoint && whole > 0 && 100.0 * std::fabs(second.median_ns() - first.median_ns()) / whole > tolerance;
  return check;
}

}  // namespace fleetmark::engine
