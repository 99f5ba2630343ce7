#include "engine/topology/energy_info.h"

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "engine/energy/discover.h"

namespace fleetmark::engine::topology_internal {

v1::EnergySourceInfo ToEnergySourceInfo(const energy::EnergySource& source) {
  v1::EnergySourceInfo info;
  info.set_name(source.name);
  info.set_kind(std::string(energy::SourceKindName(source.kind)));
  info.set_covers(source.covers);
  info.set_resolution(source.resolution);
  info.set_resolution_unit(source.reading == energy::Reading::kCounter ? "J" : "W");
  info.set_resolution_text(source.resolution_text);
  info.set_update_interval_s(source.update_interval_s);
  info.set_readable(source.readable);
  info.set_why_not(source.why_not);
  info.set_path(source.value_path);
  info.set_max_range_uj(source.max_range_uj);
  info.set_parent(source.parent);
  if (source.kind == energy::SourceKind::kBattery) {
    info.set_battery_convention(source.convention.evidence);
    info.set_charging(source.charging);
    info.set_on_external_power(source.on_external_power);
  }
  for (const std::string& note : source.notes) info.add_notes(note);
  return info;
}

void FillEnergySources(absl::string_view fsroot, bool emulated, v1::HostInfo& host) {
  absl::StatusOr<std::vector<energy::EnergySource>> sources = energy::DiscoverEnergySources(fsroot);
  if (!sources.ok()) {
    host.add_notes(absl::StrCat("energy sources: ", sources.status().message()));
    host.set_energy_unavailable(std::string(sources.status().message()));
    return;
  }
  for (const energy::EnergySource& source : *sources) *host.add_energy_sources() = ToEnergySourceInfo(source);
  if (emulated) {
    host.set_energy_unavailable("this binary runs under user-mode emulation: its numbers measure the emulator");
    return;
  }
  host.set_energy_unavailable(energy::EnergyUnavailableReason(*sources));
}

}  // namespace fleetmark::engine::topology_internal
