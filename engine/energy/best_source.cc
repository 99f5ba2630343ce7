#include "engine/energy/best_source.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace fleetmark::engine::energy {
namespace {

bool IsPsys(const EnergySource& source) { return absl::StartsWith(source.name, "rapl:psys"); }

EnergyChoice Sum(std::vector<EnergySource> sources) {
  EnergyChoice choice;
  std::vector<std::string> names;
  std::vector<std::string> covers;
  for (const EnergySource& source : sources) {
    names.push_back(source.name);
    covers.push_back(source.covers);
    choice.resolution += source.resolution;
    choice.update_interval_s = std::max(choice.update_interval_s, source.update_interval_s);
  }
  choice.reading = sources.front().reading;
  choice.id = absl::StrJoin(names, "+");
  choice.covers = absl::StrJoin(covers, "; ");
  choice.sources = std::move(sources);
  return choice;
}

}  // namespace

std::optional<EnergyChoice> ChooseEnergySources(const std::vector<EnergySource>& sources) {
  std::vector<EnergySource> packages;
  for (const EnergySource& source : sources) {
    if (!source.readable || source.kind != SourceKind::kRapl || !source.parent.empty()) continue;
    if (IsPsys(source)) return Sum({source});
    if (absl::string_view(source.name).find("dram") == absl::string_view::npos) packages.push_back(source);
  }
  if (!packages.empty()) return Sum(std::move(packages));
  for (SourceKind kind : {SourceKind::kHwmonEnergy, SourceKind::kHwmonPower, SourceKind::kBattery}) {
    for (const EnergySource& source : sources) {
      if (source.readable && source.kind == kind) return Sum({source});
    }
  }
  return std::nullopt;
}

}  // namespace fleetmark::engine::energy
