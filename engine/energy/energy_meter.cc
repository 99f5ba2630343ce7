#include "engine/energy/energy_meter.h"

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/common/status_macros.h"
#include "engine/energy/counter_delta.h"
#include "engine/energy/source_sample.h"

namespace fleetmark::engine::energy {

absl::StatusOr<EnergyMeter> EnergyMeter::Start(const EnergyFiles& files, const EnergySource& source, double at_s) {
  if (!source.readable) {
    return absl::FailedPreconditionError(
        absl::StrCat("energy source ", source.name, " is not readable: ", source.why_not));
  }
  if (!std::isfinite(at_s)) return absl::InvalidArgumentError("energy meter start time is not finite");
  FLEETMARK_ASSIGN_OR_RETURN(SourceSample first, ReadSourceSample(files, source));
  EnergyMeter meter(files, source);
  if (source.reading == Reading::kPower) {
    FLEETMARK_RETURN_IF_ERROR(meter.integral_.Add(at_s, first.watts));
  }
  meter.last_counter_ = first.counter;
  meter.start_at_s_ = meter.last_at_s_ = at_s;
  meter.samples_ = 1;
  meter.saw_charging_ = first.charging;
  return meter;
}

absl::Status EnergyMeter::Sample(double at_s) {
  if (!std::isfinite(at_s) || !(at_s > last_at_s_)) {
    return absl::InvalidArgumentError(
        absl::StrCat("energy sample at ", at_s, " s is not after the previous one at ", last_at_s_, " s"));
  }
  FLEETMARK_ASSIGN_OR_RETURN(SourceSample sample, ReadSourceSample(*files_, source_));
  if (source_.reading == Reading::kCounter) {
    FLEETMARK_ASSIGN_OR_RETURN(uint64_t delta, CounterDelta(last_counter_, sample.counter, source_.max_range_uj));
    if (sample.counter < last_counter_) ++wraps_;
    counted_ += delta;
    last_counter_ = sample.counter;
  } else {
    FLEETMARK_RETURN_IF_ERROR(integral_.Add(at_s, sample.watts));
  }
  last_at_s_ = at_s;
  ++samples_;
  saw_charging_ = saw_charging_ || sample.charging;
  return absl::OkStatus();
}

double EnergyMeter::joules() const {
  return source_.reading == Reading::kCounter ? static_cast<double>(counted_) * source_.value_scale
                                              : integral_.joules();
}

}  // namespace fleetmark::engine::energy
