#include "engine/energy/source_sample.h"

#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "engine/common/status_macros.h"
#include "engine/energy/sysfs_value.h"

namespace fleetmark::engine::energy {
namespace {

absl::StatusOr<SourceSample> ReadBattery(const EnergyFiles& files, const EnergySource& source) {
  const BatteryConvention& convention = source.convention;
  FLEETMARK_ASSIGN_OR_RETURN(int64_t current, ReadSysfsInt(files, source.value_path));
  FLEETMARK_ASSIGN_OR_RETURN(int64_t voltage, ReadSysfsNonNegative(files, source.voltage_path));
  const double volts = static_cast<double>(voltage) * convention.voltage_scale_v;
  if (!(volts >= 1 && volts <= 60)) {
    return absl::InvalidArgumentError(
        absl::StrCat(source.voltage_path, ": ", voltage, " is ", volts, " V, outside 1..60 V"));
  }
  const double amps = static_cast<double>(current) * convention.current_scale_a;
  SourceSample sample;
  sample.charging = files.Read(source.status_path).value_or("") == "Charging";
  if (convention.discharge_sign == 0) {
    sample.watts = std::fabs(amps) * volts;
  } else {
    const double discharge_amps = amps * convention.discharge_sign;
    if (discharge_amps < 0) sample.charging = true;
    sample.watts = discharge_amps > 0 ? discharge_amps * volts : 0;
  }
  if (sample.charging) sample.watts = 0;
  return sample;
}

}  // namespace

absl::StatusOr<SourceSample> ReadSourceSample(const EnergyFiles& files, const EnergySource& source) {
  if (source.kind == SourceKind::kBattery) return ReadBattery(files, source);
  FLEETMARK_ASSIGN_OR_RETURN(int64_t value, ReadSysfsNonNegative(files, source.value_path));
  SourceSample sample;
  if (source.reading == Reading::kCounter) {
    sample.counter = static_cast<uint64_t>(value);
  } else {
    sample.watts = static_cast<double>(value) * source.value_scale;
  }
  return sample;
}

}  // namespace fleetmark::engine::energy
