#include "coordinator/store/agent_health.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "absl/strings/str_format.h"
#include "engine/measure/statistics.h"

namespace fleetmark::store {
namespace {

// MAD → σ for normal data (1 / Φ⁻¹(3/4)).
constexpr double kMadToSigma = 1.4826;

// Every case id of `nights`.
std::set<std::string> CaseIds(const std::vector<CalibrationNight>& nights) {
  std::set<std::string> ids;
  for (const CalibrationNight& night : nights) {
    for (const auto& [id, median] : night.median_ns) ids.insert(id);
  }
  return ids;
}

// The usable medians (finite, > 0) of case `id` in `nights`.
std::vector<double> CalibrationCaseSeries(const std::vector<CalibrationNight>& nights, const std::string& id) {
  std::vector<double> series;
  for (const CalibrationNight& night : nights) {
    auto it = night.median_ns.find(id);
    if (it != night.median_ns.end() && std::isfinite(it->second) && it->second > 0) series.push_back(it->second);
  }
  return series;
}

double Percent(double fraction) { return 100 * fraction; }

}  // namespace

absl::Status ValidateHealthOptions(const HealthOptions& o) {
  auto check = [](const char* flag, double value, double min, double max) -> absl::Status {
    if (std::isfinite(value) && value >= min && value <= max) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrFormat("--%s: %g <= %s <= %g, got %g", flag, min, flag, max, value));
  };
  for (absl::Status s : {check("noise_nights", o.noise_nights, kMinNoiseNights, 1000),
                         check("quarantine_drift_percent", o.drift_percent, 0, 1000),
                         check("quarantine_drift_noise_multiple", o.drift_noise_multiple, 0, 100),
                         check("quarantine_noise_percent", o.noise_limit_percent, 0, 1000),
                         check("quarantine_deferred_jobs", o.deferred_jobs, 0, 1000)}) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

bool IsCalibrationLabel(std::string_view label) {
  return label.substr(0, sizeof(kCalibrationLabelPrefix) - 1) == kCalibrationLabelPrefix;
}

std::optional<double> LogSpread(const std::vector<double>& values, size_t min_count) {
  std::vector<double> logs;
  for (double v : values) {
    if (std::isfinite(v) && v > 0) logs.push_back(std::log(v));
  }
  if (logs.size() < std::max<size_t>(min_count, 1)) return std::nullopt;
  const double center = engine::Median(logs);
  for (double& x : logs) x = std::fabs(x - center);
  return kMadToSigma * engine::Median(logs);
}

std::optional<double> NoiseScore(const std::vector<CalibrationNight>& nights) {
  std::vector<double> per_case;
  for (const std::string& id : CaseIds(nights)) {
    if (std::optional<double> spread = LogSpread(CalibrationCaseSeries(nights, id), kMinNoiseNights))
      per_case.push_back(*spread);
  }
  if (per_case.empty()) return std::nullopt;
  return engine::Median(per_case);
}

HealthVerdict EvaluateCalibration(const std::vector<CalibrationNight>& all, const HealthOptions& options) {
  const size_t k = static_cast<size_t>(std::max(options.noise_nights, kMinNoiseNights));
  const std::vector<CalibrationNight> nights(all.size() > k ? all.end() - k : all.begin(), all.end());
  HealthVerdict verdict;
  verdict.nights = static_cast<int>(nights.size());
  verdict.noise = NoiseScore(nights);
  if (nights.empty()) return verdict;

  // Rule (a): the newest night against the median of the earlier ones, per case.
  const CalibrationNight& newest = nights.back();
  const std::vector<CalibrationNight> earlier(nights.begin(), nights.end() - 1);
  std::vector<double> shifts;
  for (const auto& [id, median] : newest.median_ns) {
    const std::vector<double> history = CalibrationCaseSeries(earlier, id);
    if (history.size() < static_cast<size_t>(kMinDriftHistoryNights) || !std::isfinite(median) || median <= 0) {
      continue;
    }
    shifts.push_back(std::log(median) - std::log(engine::Median(history)));
  }
  if (!shifts.empty()) {
    verdict.drift = std::expm1(engine::Median(shifts));
    const double earlier_noise = NoiseScore(earlier).value_or(0);
    const double limit = std::max(options.drift_percent / 100, options.drift_noise_multiple * earlier_noise);
    if (options.drift_percent > 0 && std::fabs(*verdict.drift) > limit) {
      verdict.quarantine_reason = absl::StrFormat(
          "calibration drift: the newest night is %.1f %% %s than the median of its %d earlier nights (limit "
          "±%.1f %% = max(%g %%, %g × noise %.1f %%))",
          Percent(std::fabs(*verdict.drift)), *verdict.drift > 0 ? "slower" : "faster", earlier.size(), Percent(limit),
          options.drift_percent, options.drift_noise_multiple, Percent(earlier_noise));
      return verdict;
    }
  }
  // Rule (b): the noise score over the window.
  if (options.noise_limit_percent > 0 && verdict.noise && verdict.nights >= kMinNoiseLimitNights &&
      Percent(*verdict.noise) > options.noise_limit_percent) {
    verdict.quarantine_reason =
        absl::StrFormat("noise %.1f %% over %d nights exceeds the limit of %g %% (--quarantine_noise_percent)",
                        Percent(*verdict.noise), verdict.nights, options.noise_limit_percent);
  }
  return verdict;
}

std::string DeferredQuarantineReason(int deferred_in_a_row, const HealthOptions& options,
                                     std::string_view last_message) {
  if (options.deferred_jobs <= 0 || deferred_in_a_row < options.deferred_jobs) return "";
  return absl::StrFormat("preflight gates deferred %d jobs in a row (--quarantine_deferred_jobs %d); last: %s",
                         deferred_in_a_row, options.deferred_jobs, std::string(last_message));
}

}  // namespace fleetmark::store
