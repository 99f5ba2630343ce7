// sysfs reader for TopologyView (the fallback when hwloc is not used or fails).
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "engine/topology/topology_view.h"

namespace fleetmark::engine::topology_internal {
namespace {

constexpr absl::string_view kCpuDir = "/sys/devices/system/cpu";

// Reads a CPU set from "<base>_list" (cpulist format) or "<base>" (hex mask).
std::optional<CpuSet> ReadCpuSetFile(const SysfsReader& reader, const std::string& base) {
  if (std::optional<std::string> list = reader.Read(absl::StrCat(base, "_list"))) {
    absl::StatusOr<CpuSet> cpus = ParseCpuList(*list);
    if (cpus.ok()) return *std::move(cpus);
  }
  if (std::optional<std::string> mask = reader.Read(base)) {
    absl::StatusOr<CpuSet> cpus = ParseCpuMask(*mask);
    if (cpus.ok()) return *std::move(cpus);
  }
  return std::nullopt;
}

CpuSet Intersect(const CpuSet& a, const CpuSet& b) {
  CpuSet out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

// "48K" / "2048K" / "24M" -> bytes; 0 if malformed.
uint64_t ParseCacheSize(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  uint64_t multiplier = 1;
  if (!text.empty()) {
    switch (absl::ascii_toupper(text.back())) {
      case 'K':
        multiplier = 1024;
        break;
      case 'M':
        multiplier = 1024 * 1024;
        break;
      case 'G':
        multiplier = 1024ull * 1024 * 1024;
        break;
      default:
        break;
    }
    if (multiplier != 1) text.remove_suffix(1);
  }
  uint64_t value = 0;
  return absl::SimpleAtoi(text, &value) ? value * multiplier : 0;
}

}  // namespace

absl::StatusOr<TopologyView> ReadSysfsTopology(const SysfsReader& reader, const CpuSet& cpus) {
  if (cpus.empty()) {
    return absl::NotFoundError(absl::StrCat("sysfs: no CPU under \"", reader.fsroot(), kCpuDir, "\""));
  }
  TopologyView view;
  // Cores: group CPUs by their SMT sibling set within the package.
  std::map<std::pair<int, CpuSet>, bool> seen;
  std::set<int> package_ids;
  std::map<int, int> package_index;  // physical_package_id -> 0-based index
  for (int cpu : cpus) {
    const std::string topo = absl::StrCat(kCpuDir, "/cpu", cpu, "/topology");
    std::optional<CpuSet> siblings = ReadCpuSetFile(reader, absl::StrCat(topo, "/thread_siblings"));
    if (!siblings) siblings = ReadCpuSetFile(reader, absl::StrCat(topo, "/core_cpus"));
    CpuSet core_cpus = siblings ? Intersect(*siblings, cpus) : CpuSet{};
    if (std::find(core_cpus.begin(), core_cpus.end(), cpu) == core_cpus.end()) {
      core_cpus = {cpu};
    }
    std::optional<int64_t> package = reader.ReadInt(absl::StrCat(topo, "/physical_package_id"));
    const int package_id = static_cast<int>(std::max<int64_t>(0, package.value_or(0)));
    package_ids.insert(package_id);
    seen.emplace(std::pair{package_id, core_cpus}, true);
  }
  int next = 0;
  for (int id : package_ids) package_index[id] = next++;
  for (const auto& [key, unused] : seen) {
    view.cores.push_back(CoreView{package_index[key.first], key.second});
  }
  std::sort(view.cores.begin(), view.cores.end(),
            [](const CoreView& a, const CoreView& b) { return a.cpus[0] < b.cpus[0]; });
  view.packages = static_cast<int>(package_ids.size());

  // Caches: one entry per distinct (level, type, shared CPUs).
  std::set<std::tuple<uint32_t, std::string, CpuSet>> cache_keys;
  for (int cpu : cpus) {
    const std::string cache_dir = absl::StrCat(kCpuDir, "/cpu", cpu, "/cache");
    for (int index : reader.ListNumbered(cache_dir, "index")) {
      const std::string dir = absl::StrCat(cache_dir, "/index", index);
      std::optional<uint64_t> level = reader.ReadUint(absl::StrCat(dir, "/level"));
      std::optional<std::string> type = reader.Read(absl::StrCat(dir, "/type"));
      if (!level || !type) continue;
      std::string type_name = absl::AsciiStrToLower(*type);
      std::optional<CpuSet> shared = ReadCpuSetFile(reader, absl::StrCat(dir, "/shared_cpu"));
      CpuSet sharing = shared ? Intersect(*shared, cpus) : CpuSet{cpu};
      if (sharing.empty()) sharing = {cpu};
      if (!cache_keys.emplace(static_cast<uint32_t>(*level), type_name, sharing).second) {
        continue;
      }
      v1::CacheInfo cache;
      cache.set_level(static_cast<uint32_t>(*level));
      cache.set_type(type_name);
      cache.set_size_bytes(ParseCacheSize(reader.Read(absl::StrCat(dir, "/size")).value_or("")));
      for (int c : sharing) cache.add_cpus(static_cast<uint32_t>(c));
      view.caches.push_back(std::move(cache));
    }
  }
  std::sort(view.caches.begin(), view.caches.end(), [](const v1::CacheInfo& a, const v1::CacheInfo& b) {
    return std::tuple(a.level(), a.type(), a.cpus(0)) < std::tuple(b.level(), b.type(), b.cpus(0));
  });

  view.numa_nodes = std::max<int>(1, static_cast<int>(reader.ListNumbered("/sys/devices/system/node", "node").size()));
  return view;
}

}  // namespace fleetmark::engine::topology_internal
