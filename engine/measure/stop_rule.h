// The stop rule of the repetition loop: keep repeating a case until the median's 95%
// confidence interval is tight enough, or a repetition or time cap is reached
// (docs/architecture.md, "Measurement"; the method: docs/statistics.md).
//
//   StopRuleOptions rule = StopRuleOptionsFromSettings(plan.measurement()).value();
//   while (true) {
//     samples.push_back(RunOnce());
//     StopDecision d = DecideStop(samples, rule, SteadyNow() - start);
//     if (d.stop) { result.set_stop_reason(d.reason); break; }
//   }
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "fleetmark/v1/plan.pb.h"
#include "fleetmark/v1/result.pb.h"

namespace fleetmark::engine {

struct StopRuleOptions {
  // Stop when the 95% CI half-width of the median is <= this % of the median.
  // <= 0 disables the CI stop (only the caps end the loop).
  double target_ci_percent = 2.0;
  int64_t min_repetitions = 10;                 // no CI stop before this many samples
  int64_t max_repetitions = 1000;               // stop at this many samples (>= 1)
  absl::Duration max_time = absl::Seconds(10);  // stop once elapsed >= this
  // measurement.min_seconds_per_case: no CI_TARGET stop before elapsed >= this (the
  // caps still end the loop earlier).
  absl::Duration min_time = absl::ZeroDuration();
  // measurement.processes: with >= 2 the CI is the hierarchical one over the samples'
  // processes (statistics.h) and CI_TARGET needs at least this many processes.
  int64_t processes = 1;
  // ... each holding at least this many samples (a process of one sample has no
  // median worth the name; the runner passes ceil(min_repetitions / processes)).
  int64_t min_process_repetitions = 1;
  uint64_t bootstrap_seed = 0;  // seed of the hierarchical bootstrap
};

// Documented defaults and caps of MeasurementSettings (plan.proto).
inline constexpr double kDefaultTargetCiPercent = 2.0;
inline constexpr int64_t kDefaultMinRepetitions = 10;
inline constexpr int64_t kDefaultMaxRepetitions = 1000;
inline constexpr int64_t kMaxRepetitionsCap = 1000000;
inline constexpr double kDefaultMaxSecondsPerCase = 10.0;
inline constexpr double kMaxSecondsPerCaseCap = 86400.0;
inline constexpr double kDefaultMinSecondsPerCase = 0.5;  // lowered to max_seconds_per_case
inline constexpr uint32_t kDefaultProcesses = 3;
inline constexpr uint32_t kMaxProcesses = 64;
// A batch case's fewest processes, in every mode (--quick included): a verdict is a
// claim about the next invocation, and an interval over fewer than three process
// medians says nothing about it (Kalibera & Jones, ISMM 2013: the process is the level
// that varies between invocations). measurement.processes 1 and 2 are raised to this.
inline constexpr uint32_t kMinBatchProcesses = 3;
// measurement.max_processes: the racing cap (engine/runner/runner.h) when 0. The case's
// time budget (max_seconds_per_case) bounds a race's time; the cap bounds how finely it is
// split into processes, and only processes narrow a verdict's interval. On the 2-core
// development VM, default invocations of plans/crossover.txtpb alternating cap 10 and 16
// (11:03-11:21 UTC, load 2.4-6.3) ended 50 % and 56 % of points decided or equivalent at
// 10, 68 % and 81 % at 16, in 282/243 s and 282/270 s.
inline constexpr uint32_t kDefaultMaxProcesses = 16;
inline constexpr uint32_t kQuickMaxProcesses = 6;  // under --quick (engine/plan ApplyQuick)

// Builds options from a plan's settings, applying the defaults for zero fields.
// InvalidArgument naming the field, value and allowed range for: a negative or
// non-finite target_ci_percent or one above 100, max_repetitions above 1 000 000,
// an explicit min_repetitions > max_repetitions (the default minimum is lowered to
// an explicit smaller maximum instead), a negative, non-finite or > 86400
// max_seconds_per_case, processes above kMaxProcesses, a negative, non-finite or
// explicit min_seconds_per_case above the (resolved) max_seconds_per_case. Field names are prefixed with `field_prefix`
// (e.g. "plan.measurement"). Pure, thread-safe.
absl::StatusOr<StopRuleOptions> StopRuleOptionsFromSettings(const fleetmark::v1::MeasurementSettings& settings,
                                                            const std::string& field_prefix = "measurement");

struct StopDecision {
  bool stop = false;
  // Why it stopped (STOP_REASON_UNSPECIFIED while continuing). When several hold at
  // once the order is CI_TARGET, then MAX_REPETITIONS, then MAX_TIME.
  fleetmark::v1::StopReason reason = fleetmark::v1::STOP_REASON_UNSPECIFIED;
  fleetmark::v1::Statistics stats;  // of the samples given
};

// Decides whether to take another repetition after `samples_ns` (wall times, ns) were
// measured in `elapsed` (measurement time of this case so far). Rules:
//   - CI_TARGET when count >= max(min_repetitions, 6), elapsed >= min_time, the CI is
//     achieved and its half-width % <= target_ci_percent (target > 0);
//   - MAX_REPETITIONS when count >= max_repetitions;
//   - MAX_TIME when elapsed >= max_time and count >= 1 (the time cap wins over
//     min_repetitions, so a slow case cannot overrun its time budget).
// With no samples it always continues unless max_repetitions <= 0 (then it stops
// with MAX_REPETITIONS). Computes the statistics once (O(n log n)); pure, thread-safe.
StopDecision DecideStop(absl::Span<const int64_t> samples_ns, const StopRuleOptions& options, absl::Duration elapsed);

// Same, for samples measured in consecutive processes of `process_sizes` samples
// (statistics.h's cutting). With options.processes <= 1 it is DecideStop above (one
// pool). Otherwise the statistics are ComputeHierarchicalStatistics(samples_ns,
// process_sizes, options.bootstrap_seed), and CI_TARGET also needs at least
// options.processes processes of >= options.min_process_repetitions samples each. Pure, thread-safe;
// O(kBootstrapReplicates · n).
StopDecision DecideStop(absl::Span<const int64_t> samples_ns, absl::Span<const uint32_t> process_sizes,
                        const StopRuleOptions& options, absl::Duration elapsed);

// Stationarity check: does a sequence of samples (one process's, in measurement order)
// drift? The nonparametric counterpart of Geweke's convergence diagnostic (Geweke,
// "Evaluating the accuracy of sampling-based approaches to the calculation of posterior
// moments", Bayesian Statistics 4, 1992: compare an early and a late segment of the
// chain), with the halves' medians and their distribution-free 95% CIs (statistics.h):
// the samples drift when the two halves' CIs of the median are disjoint and their medians
// differ by more than `tolerance_percent` of the whole median — a level shift the case's
// own CI target would call real. A transient phase (a fast start, a slow start, a cache
// or a pool that settles) shows up as such a shift; Kalibera & Jones (ISMM 2013, §3)
// discard it as warm-up.
inline constexpr size_t kMinDriftHalf = 10;  // no verdict below 2 x this many samples
// The tolerance never goes below this (a CI target of 0.0001% must not call every
// scheduler hiccup a transient).
inline constexpr double kMinDriftTolerancePercent = 1.0;

struct DriftCheck {
  bool checked = false;   // n >= 2 * kMinDriftHalf
  bool drifting = false;  // checked and the halves differ (above)
  double first_median_ns = 0;
  double second_median_ns = 0;
};

// Checks `samples_ns` (the first floor(n/2) against the last ceil(n/2)) with the
// tolerance max(tolerance_percent, kMinDriftTolerancePercent); <= 0 means
// kDefaultTargetCiPercent. Pure, thread-safe, O(n log n).
DriftCheck DetectDrift(absl::Span<const int64_t> samples_ns, double tolerance_percent);

}  // namespace fleetmark::engine
