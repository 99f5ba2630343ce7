#include "engine/energy/discover.h"

#include <sys/stat.h>

#include <iterator>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/energy/battery_sources.h"
#include "engine/energy/hwmon_sources.h"
#include "engine/energy/rapl_sources.h"

namespace fleetmark::engine::energy {
namespace {

void MakeNamesUnique(std::vector<EnergySource>& sources) {
  std::map<std::string, int> seen;
  for (EnergySource& source : sources) {
    const int count = ++seen[source.name];
    if (count > 1) absl::StrAppend(&source.name, " #", count);
  }
}

}  // namespace

std::vector<EnergySource> DiscoverEnergySources(const EnergyFiles& files) {
  std::vector<EnergySource> sources = internal::DiscoverRaplSources(files);
  for (std::vector<EnergySource> more :
       {internal::DiscoverHwmonSources(files), internal::DiscoverBatterySources(files)}) {
    sources.insert(sources.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  }
  MakeNamesUnique(sources);
  return sources;
}

absl::StatusOr<std::vector<EnergySource>> DiscoverEnergySources(absl::string_view fsroot) {
  if (!fsroot.empty()) {
    struct stat st;
    if (stat(std::string(fsroot).c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return absl::InvalidArgumentError(absl::StrCat("energy fsroot: \"", fsroot, "\" is not a directory"));
    }
  }
  return DiscoverEnergySources(*SysfsEnergyFiles(std::string(fsroot)));
}

std::string EnergyUnavailableReason(const std::vector<EnergySource>& sources) {
  if (sources.empty()) {
    return "no RAPL zone in /sys/class/powercap, no hwmon power or energy channel in /sys/class/hwmon, no battery in "
           "/sys/class/power_supply";
  }
  std::vector<std::string> why;
  for (const EnergySource& source : sources) {
    if (source.readable) return "";
    why.push_back(absl::StrCat(source.name, " (", source.why_not, ")"));
  }
  return absl::StrCat("no readable source: ", absl::StrJoin(why, "; "));
}

}  // namespace fleetmark::engine::energy
