#include "engine/energy/energy_source.h"

namespace fleetmark::engine::energy {

absl::string_view SourceKindName(SourceKind kind) {
  switch (kind) {
    case SourceKind::kRapl:
      return "rapl";
    case SourceKind::kHwmonEnergy:
      return "hwmon-energy";
    case SourceKind::kHwmonPower:
      return "hwmon-power";
    case SourceKind::kBattery:
      return "battery";
  }
  return "unknown";
}

}  // namespace fleetmark::engine::energy
