#include "engine/energy/rapl_sources.h"

#include <algorithm>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "engine/energy/sysfs_value.h"

namespace fleetmark::engine::energy::internal {
namespace {

constexpr absl::string_view kPowercapDir = "/sys/class/powercap";

// RAPL counters step in µJ, but the hardware's energy unit is coarser and the MSR is
// updated about every millisecond (Khan et al. 2018, section 3).
constexpr double kRaplUpdateIntervalS = 1e-3;
constexpr char kRaplResolutionText[] =
    "energy_uj counts 1 µJ; the hardware's energy unit is coarser (Intel 61 µJ or 15.3 µJ, AMD 15.3 µJ) and the "
    "counter is updated about every 1 ms, so readings closer than 1 ms repeat";

// Whether `entry` is a zone id "<type>:<n>[:<m>...]" (the control type directory
// "intel-rapl" itself is not).
bool IsZoneId(absl::string_view entry) {
  const std::size_t colon = entry.find(':');
  if (colon == absl::string_view::npos || colon == 0) return false;
  absl::string_view numbers = entry.substr(colon + 1);
  if (numbers.empty()) return false;
  bool digit_before = false;
  for (char c : numbers) {
    if (c == ':') {
      if (!digit_before) return false;
      digit_before = false;
    } else if (c >= '0' && c <= '9') {
      digit_before = true;
    } else {
      return false;
    }
  }
  return digit_before;
}

// "intel-rapl:0:1" -> "intel-rapl:0"; "intel-rapl:0" -> "" (a top-level zone).
std::string ParentZone(absl::string_view zone) {
  const std::size_t last = zone.rfind(':');
  const std::size_t first = zone.find(':');
  return last == first ? std::string() : std::string(zone.substr(0, last));
}

std::string RaplCovers(absl::string_view name, absl::string_view parent) {
  if (absl::StartsWith(name, "package-")) {
    return absl::StrCat("CPU ", name,
                        ": cores, caches, uncore and memory controller (and the integrated GPU on client parts); "
                        "not the DRAM");
  }
  if (name == "core") return absl::StrCat("the CPU cores of ", parent, " (included in it)");
  if (name == "uncore")
    return absl::StrCat("the uncore of ", parent, ", on client parts the integrated GPU (included in it)");
  if (name == "dram") return absl::StrCat("the DRAM attached to ", parent, " (not included in the package's energy)");
  if (name == "psys") {
    return "the platform as the SoC reports it (package, memory, chipset and more on some laptops; Skylake and later)";
  }
  return absl::StrCat("RAPL domain \"", name, "\": coverage not known to fleetmark");
}

// The zone's `name` file, else its id.
std::string ZoneName(const EnergyFiles& files, absl::string_view zone) {
  std::string name = ReadSysfsName(files, absl::StrCat(kPowercapDir, "/", zone, "/name"));
  return name.empty() ? std::string(zone) : name;
}

std::string WhyNot(const absl::Status& status) {
  if (absl::IsPermissionDenied(status)) {
    return absl::StrCat("permission denied: ", status.message(),
                        " (energy_uj is root-only since Linux 5.10, CVE-2020-8694; docs/energy.md gives a udev rule "
                        "and the agent unit's setting that make it readable)");
  }
  return std::string(status.message());
}

}  // namespace

std::vector<EnergySource> DiscoverRaplSources(const EnergyFiles& files) {
  std::vector<EnergySource> sources;
  for (const std::string& zone : files.List(kPowercapDir)) {
    if (!IsZoneId(zone)) continue;
    const std::string dir = absl::StrCat(kPowercapDir, "/", zone);
    const std::vector<std::string> entries = files.List(dir);
    if (std::find(entries.begin(), entries.end(), "energy_uj") == entries.end()) continue;
    EnergySource& source = sources.emplace_back();
    source.kind = SourceKind::kRapl;
    source.reading = Reading::kCounter;
    const std::string name = ZoneName(files, zone);
    const std::string parent_zone = ParentZone(zone);
    if (!parent_zone.empty()) {
      source.parent = absl::StrCat("rapl:", ZoneName(files, parent_zone));
      source.name = absl::StrCat(source.parent, "/", name);
    } else {
      source.name = absl::StrCat("rapl:", name);
    }
    source.covers = RaplCovers(name, source.parent.empty() ? name : source.parent.substr(5));
    source.resolution = 1e-6;
    source.resolution_text = kRaplResolutionText;
    source.update_interval_s = kRaplUpdateIntervalS;
    source.value_path = absl::StrCat(dir, "/energy_uj");
    source.value_scale = 1e-6;

    absl::StatusOr<int64_t> range = ReadSysfsNonNegative(files, absl::StrCat(dir, "/max_energy_range_uj"));
    if (range.ok() && *range > 0) {
      source.max_range_uj = static_cast<uint64_t>(*range);
    } else {
      source.notes.push_back(
          absl::StrCat("max_energy_range_uj unknown (", range.ok() ? "0" : range.status().message(),
                       "): a wrap of the counter cannot be told from a reset, so a decrease is an error"));
    }
    absl::StatusOr<int64_t> enabled = ReadSysfsInt(files, absl::StrCat(dir, "/enabled"));
    if (enabled.ok() && *enabled == 0) source.notes.push_back("zone disabled (enabled 0): its counter may stand still");

    absl::StatusOr<int64_t> energy = ReadSysfsNonNegative(files, source.value_path);
    if (!energy.ok()) {
      source.why_not = WhyNot(energy.status());
    } else if (source.max_range_uj > 0 && static_cast<uint64_t>(*energy) > source.max_range_uj) {
      source.why_not = absl::StrCat(source.value_path, ": ", *energy, " above max_energy_range_uj ",
                                    source.max_range_uj, ", a broken counter");
    } else {
      source.readable = true;
    }
  }
  return sources;
}

}  // namespace fleetmark::engine::energy::internal
