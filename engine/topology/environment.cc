#include "engine/topology/environment.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "engine/common/message_text.h"
#include "engine/topology/cpu_facts.h"
#include "engine/topology/device_info.h"
#include "engine/topology/sensor_range.h"
#include "engine/topology/sysfs.h"

namespace fleetmark::engine {
namespace {

using topology_internal::SysfsReader;

constexpr absl::string_view kCpuDir = "/sys/devices/system/cpu";
constexpr absl::string_view kThermalDir = "/sys/class/thermal";

void ReadFrequencies(const SysfsReader& reader, const CpuSet& cpus, v1::EnvSnapshot& snap) {
  if (cpus.empty()) return;
  std::vector<uint64_t> khz(static_cast<std::size_t>(cpus.back()) + 1, 0);
  bool any = false;
  for (int cpu : cpus) {
    const std::string dir = absl::StrCat(kCpuDir, "/cpu", cpu, "/cpufreq");
    std::vector<std::string> notes;
    std::string path = absl::StrCat(dir, "/scaling_cur_freq");
    if (!reader.Exists(path)) path = absl::StrCat(dir, "/cpuinfo_cur_freq");
    std::optional<double> cur =
        topology_internal::ReadSensor(reader, path, topology_internal::kFrequencyRange, 1, path, &notes);
    for (std::string& note : notes) snap.add_notes(std::move(note));
    if (cur) {
      khz[static_cast<std::size_t>(cpu)] = static_cast<uint64_t>(*cur);
      any = true;
    }
  }
  if (any) {
    for (uint64_t v : khz) snap.add_cpu_frequency_khz(v);
  }
}

void ReadThermalZones(const SysfsReader& reader, v1::EnvSnapshot& snap) {
  for (int zone : reader.ListNumbered(kThermalDir, "thermal_zone")) {
    const std::string dir = absl::StrCat(kThermalDir, "/thermal_zone", zone);
    const std::string type = reader.Read(absl::StrCat(dir, "/type")).value_or("");
    std::vector<std::string> notes;
    std::optional<double> celsius =
        topology_internal::ReadSensor(reader, absl::StrCat(dir, "/temp"), topology_internal::kTemperatureRange, 1e-3,
                                      absl::StrCat("thermal_zone", zone, " (", type, ")"), &notes);
    for (std::string& note : notes) snap.add_notes(std::move(note));
    if (!celsius) continue;  // disabled zones fail to read; implausible ones are noted
    const int64_t milli_c = static_cast<int64_t>(std::llround(*celsius * 1000));
    snap.add_temperatures_c(*celsius);
    snap.add_thermal_zone_types(type);
    for (int trip = 0;; ++trip) {
      std::optional<std::string> type = reader.Read(absl::StrCat(dir, "/trip_point_", trip, "_type"));
      if (!type) break;
      if (*type != "passive" && *type != "hot" && *type != "critical") continue;
      std::optional<int64_t> trip_milli_c = reader.ReadInt(absl::StrCat(dir, "/trip_point_", trip, "_temp"));
      if (trip_milli_c && *trip_milli_c > 0 && milli_c >= *trip_milli_c) {
        snap.set_trip_point_crossed(true);
      }
    }
  }
}

void ReadThrottleEvents(const SysfsReader& reader, const CpuSet& cpus, v1::EnvSnapshot& snap) {
  uint64_t total = 0;
  bool readable = false;
  for (int cpu : cpus) {
    const std::string dir = absl::StrCat(kCpuDir, "/cpu", cpu, "/thermal_throttle");
    for (absl::string_view name : {"core_throttle_count", "package_throttle_count"}) {
      if (std::optional<uint64_t> n = reader.ReadUint(absl::StrCat(dir, "/", name))) {
        total += *n;
        readable = true;
      }
    }
  }
  snap.set_thermal_throttle_events(total);
  snap.set_thermal_throttle_readable(readable);
}

// The cpufreq governors of `cpus`, distinct and sorted, joined by ","; "" if none.
std::string ReadGovernors(const SysfsReader& reader, const CpuSet& cpus) {
  std::set<std::string> governors;
  for (int cpu : cpus) {
    std::optional<std::string> g = reader.Read(absl::StrCat(kCpuDir, "/cpu", cpu, "/cpufreq/scaling_governor"));
    if (g && !g->empty()) governors.insert(*g);
  }
  return absl::StrJoin(governors, ",");
}

// Battery (lowest level, any charging, hottest temperature), MemAvailable, governors.
void ReadConditions(const SysfsReader& reader, const CpuSet& cpus, v1::EnvSnapshot& snap) {
  std::vector<std::string> notes;
  std::vector<std::string> unreadable;  // a snapshot leaves unknowns unknown, unlisted
  int32_t level = -1;
  for (const v1::BatteryInfo& battery : topology_internal::ReadBatteries(reader, &notes, &unreadable)) {
    if (battery.level_percent() >= 0 && (level < 0 || battery.level_percent() < level)) {
      level = battery.level_percent();
    }
    if (battery.charging()) snap.set_battery_charging(true);
    if (battery.temperature_known() &&
        (!snap.battery_temperature_known() || battery.temperature_c() > snap.battery_temperature_c())) {
      snap.set_battery_temperature_c(battery.temperature_c());
      snap.set_battery_temperature_known(true);
    }
  }
  snap.set_battery_level_percent(level);
  for (std::string& note : notes) snap.add_notes(std::move(note));
  snap.set_free_memory_bytes(topology_internal::ReadMeminfoField(reader, "MemAvailable").value_or(0));
  snap.set_governor(ReadGovernors(reader, cpus));
}

// Highest current frequency among `cpus` (indices into snap), 0 if none is known.
uint64_t MaxFrequency(const v1::EnvSnapshot& snap, const std::vector<uint32_t>& cpus) {
  uint64_t best = 0;
  for (uint32_t cpu : cpus) {
    if (cpu < static_cast<uint32_t>(snap.cpu_frequency_khz_size())) {
      best = std::max<uint64_t>(best, snap.cpu_frequency_khz(static_cast<int>(cpu)));
    }
  }
  return best;
}

}  // namespace

v1::EnvSnapshot TakeEnvSnapshot(std::string_view fsroot) {
  SysfsReader reader{std::string(fsroot)};
  v1::EnvSnapshot snap;
  snap.set_unix_time_ns(absl::ToUnixNanos(absl::Now()));
  const CpuSet cpus = topology_internal::ReadOnlineCpus(reader, {});
  ReadFrequencies(reader, cpus, snap);
  ReadThermalZones(reader, snap);
  ReadThrottleEvents(reader, cpus, snap);
  ReadConditions(reader, cpus, snap);
  const std::string loadavg = reader.Read("/proc/loadavg").value_or("");
  std::vector<absl::string_view> load = absl::StrSplit(loadavg, ' ', absl::SkipEmpty());
  double load_1m = 0;
  if (!load.empty() && absl::SimpleAtod(load[0], &load_1m)) snap.set_load_average_1m(load_1m);
  // Text read from the device's files (zone types, notes naming them, the governor)
  // passes the agent hello's text rule, as HostInfo's does.
  SanitizeMessageText(&snap, HelloTextRules());
  return snap;
}

ThrottleVerdict Throttled(const v1::EnvSnapshot& before, const v1::EnvSnapshot& after, const v1::HostInfo& host) {
  std::vector<std::string> reasons;
  std::vector<std::pair<std::string, std::vector<uint32_t>>> groups;
  for (const v1::CoreKind& c : host.core_classes()) {
    groups.emplace_back(c.name(), std::vector<uint32_t>(c.cpus().begin(), c.cpus().end()));
  }
  if (groups.empty()) {
    std::vector<uint32_t> all;
    const int n = std::max(before.cpu_frequency_khz_size(), after.cpu_frequency_khz_size());
    for (int i = 0; i < n; ++i) all.push_back(static_cast<uint32_t>(i));
    groups.emplace_back("all CPUs", std::move(all));
  }
  for (const auto& [name, cpus] : groups) {
    const uint64_t was = MaxFrequency(before, cpus);
    const uint64_t now = MaxFrequency(after, cpus);
    if (was == 0 || now == 0) continue;
    const double drop = 1.0 - static_cast<double>(now) / static_cast<double>(was);
    if (drop > kThrottleFrequencyDropFraction) {
      reasons.push_back(absl::StrFormat("class %s: max frequency %d -> %d kHz (-%.1f%%, threshold %.0f%%)", name, was,
                                        now, 100.0 * drop, 100.0 * kThrottleFrequencyDropFraction));
    }
  }
  if (after.trip_point_crossed()) {
    reasons.push_back(before.trip_point_crossed() ? "a thermal zone was at or above a trip point before and after"
                                                  : "a thermal zone crossed a trip point during the case");
  }
  if (before.thermal_throttle_readable() && after.thermal_throttle_readable() &&
      after.thermal_throttle_events() > before.thermal_throttle_events()) {
    reasons.push_back(absl::StrCat("x86 thermal throttle events +",
                                   after.thermal_throttle_events() - before.thermal_throttle_events()));
  }
  ThrottleVerdict verdict;
  verdict.throttled = !reasons.empty();
  verdict.reason = absl::StrJoin(reasons, "; ");
  return verdict;
}

}  // namespace fleetmark::engine
