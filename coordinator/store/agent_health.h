// Fleet health of one agent from its nightly calibration block: the noise score and the
// quarantine rules (issue 14, items 3 and 4). Pure functions over a series of nights;
// the store (store_jobs.cc) feeds them the agent's stored calibration medians and keeps
// the outcome in the agents table (migration 0010).
//
//   std::vector<CalibrationNight> nights = ...;  // oldest first, one per run
//   HealthVerdict v = EvaluateCalibration(nights, HealthOptions{});
//   if (v.noise) ...   // e.g. 0.012 = 1.2 %
//   if (!v.quarantine_reason.empty()) ...
//
// Calibration cases are recognised by one rule, IsCalibrationLabel: their strategy label
// starts with "calibration_" (plans/nightly.txtpb's calibration matrix).
//
// Noise score (Rousseeuw & Croux 1993, MAD as a consistent estimator of σ): per
// calibration case, 1.4826 × MAD over nights of ln(median time); the agent's score is
// the median of that over its cases. ln makes it scale-free (a phone and a server
// compare; it reads as a relative spread, 0.01 ≈ 1 %), the MAD ignores one bad night,
// and the median over cases ignores one bad case.
//
// Thread-safety: pure functions; any thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace fleetmark::store {

// The strategy-label prefix that marks a calibration case.
inline constexpr char kCalibrationLabelPrefix[] = "calibration_";

// True when a case with strategy label `label` is a calibration case.
bool IsCalibrationLabel(std::string_view label);

// Fewest nights a noise score is computed from (per case); fewer: unknown.
inline constexpr int kMinNoiseNights = 3;
// Fewest nights before the newest one that the drift rule compares against.
inline constexpr int kMinDriftHistoryNights = 3;
// Fewest nights the noise limit is judged on (a score from 3 nights is too rough).
inline constexpr int kMinNoiseLimitNights = 5;

// The coordinator's health flags (coordinator/main.cc). A limit of 0 turns its rule off.
struct HealthOptions {
  // K: the newest nights (runs with calibration results) the score looks at; 3..1000.
  int noise_nights = 14;
  // Rule (a): the newest night's calibration drift, relative to the median of the
  // earlier nights, may be at most max(drift_percent %, drift_noise_multiple × noise).
  double drift_percent = 10;
  double drift_noise_multiple = 4;
  // Rule (b): a noise score above this percent quarantines (0 = off).
  double noise_limit_percent = 10;
  // Rule (c): this many jobs deferred by preflight gates in a row quarantine (0 = off).
  int deferred_jobs = 3;
};

// InvalidArgument naming the coordinator flag and its range when an option is out of
// range: --noise_nights 3..1000, --quarantine_drift_percent 0..1000,
// --quarantine_drift_noise_multiple 0..100, --quarantine_noise_percent 0..1000,
// --quarantine_deferred_jobs 0..1000.
absl::Status ValidateHealthOptions(const HealthOptions& options);

// One night of an agent: the median time (ns, > 0) of each calibration case in one run.
struct CalibrationNight {
  std::string run_id;
  std::map<std::string, double> median_ns;  // case id -> median
};

// What a series of nights says.
struct HealthVerdict {
  // The noise score as a fraction (0.012 = 1.2 %); nullopt with fewer than
  // kMinNoiseNights nights of any case.
  std::optional<double> noise;
  int nights = 0;  // nights the score was computed from (<= K)
  // The newest night's drift (exp of the median over cases of ln(new) − ln(median of
  // the earlier nights), minus 1; +0.2 = 20 % slower), when there is enough history.
  std::optional<double> drift;
  // Non-empty when rule (a) or (b) quarantines, e.g.
  //   "calibration drift: the newest night is 23.4 % slower than the median of its 6
  //    earlier nights (limit ±10.0 % = max(10 %, 4 × noise 1.1 %))".
  std::string quarantine_reason;
};

// 1.4826 × the MAD of ln(values) (values > 0), or nullopt for fewer than `min_count`.
std::optional<double> LogSpread(const std::vector<double>& values, size_t min_count);

// The noise score of `nights` (oldest first; all of them are used): see above.
std::optional<double> NoiseScore(const std::vector<CalibrationNight>& nights);

// Noise, drift and rules (a) and (b) over the newest options.noise_nights of `nights`
// (oldest first). Rule (a) compares the newest night with the ones before it, using
// the noise of those earlier nights (so a bad newest night does not widen its own limit).
HealthVerdict EvaluateCalibration(const std::vector<CalibrationNight>& nights, const HealthOptions& options);

// Rule (c): the reason text when `deferred_in_a_row` reaches the limit, else "".
std::string DeferredQuarantineReason(int deferred_in_a_row, const HealthOptions& options,
                                     std::string_view last_message);

}  // namespace fleetmark::store
