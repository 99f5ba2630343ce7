// The energy one source delivers between a start and the latest sample, in joules:
// counters (RAPL, hwmon energy) summed delta by delta with wrap handling
// (counter_delta.h), power sources (hwmon power, batteries) integrated by the
// trapezoidal rule (power_integral.h).
//
//   FLEETMARK_ASSIGN_OR_RETURN(EnergyMeter meter, EnergyMeter::Start(files, source, now_s));
//   ...                                        // every few ms (power) or < a wrap (counters)
//   FLEETMARK_RETURN_IF_ERROR(meter.Sample(now_s));
//   double joules = meter.joules();
//
// Times are seconds of the caller's steady clock (any origin). A counter needs a sample
// at least once per wrap period (counter_delta.h); a power source as often as its power
// changes: its energy between samples is interpolated. Battery samples taken while
// charging count 0 W and set saw_charging(): such a result is not the device's
// consumption. Not thread-safe: one owner samples.
#pragma once

#include <cstdint>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/energy/energy_files.h"
#include "engine/energy/energy_source.h"
#include "engine/energy/power_integral.h"

namespace fleetmark::engine::energy {

class EnergyMeter {
 public:
  // Takes the first sample of `source` at `at_s`. `files` must outlive the meter.
  // FailedPrecondition naming the source when it is not readable (its why_not); the
  // read's error otherwise (ReadSourceSample).
  static absl::StatusOr<EnergyMeter> Start(const EnergyFiles& files, const EnergySource& source, double at_s);

  // Takes a sample at `at_s`, which must be after the previous sample (InvalidArgument).
  // A failed read or a counter that went back without a known range (FailedPrecondition)
  // leaves the meter as it was, so a later sample can still succeed.
  absl::Status Sample(double at_s);

  double joules() const;                                       // since Start
  double seconds() const { return last_at_s_ - start_at_s_; }  // covered by samples
  int samples() const { return samples_; }
  int wraps() const { return wraps_; }                 // counter wrap-arounds seen
  bool saw_charging() const { return saw_charging_; }  // a battery sample while charging
  const EnergySource& source() const { return source_; }

 private:
  EnergyMeter(const EnergyFiles& files, EnergySource source) : files_(&files), source_(std::move(source)) {}

  const EnergyFiles* files_;
  EnergySource source_;
  double start_at_s_ = 0;
  double last_at_s_ = 0;
  int samples_ = 0;
  int wraps_ = 0;
  bool saw_charging_ = false;
  uint64_t last_counter_ = 0;
  uint64_t counted_ = 0;  // counter units since Start
  PowerIntegral integral_;
};

}  // namespace fleetmark::engine::energy
