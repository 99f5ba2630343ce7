#include "engine/topology/conditions_text.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace fleetmark::engine {

std::string FormatConditions(const v1::EnvSnapshot& env) {
  std::vector<std::string> parts;
  if (env.battery_level_percent() >= 0 && (env.battery_level_percent() > 0 || env.battery_charging())) {
    parts.push_back(
        absl::StrCat("battery ", env.battery_level_percent(), " %", env.battery_charging() ? " charging" : ""));
  }
  if (env.battery_temperature_known()) {
    parts.push_back(absl::StrFormat("battery %.1f °C", env.battery_temperature_c()));
  }
  if (env.temperatures_c_size() > 0) {
    double hottest = env.temperatures_c(0);
    for (double t : env.temperatures_c()) hottest = std::max(hottest, t);
    parts.push_back(absl::StrFormat("hottest zone %.1f °C", hottest));
  }
  if (env.unix_time_ns() != 0 || env.load_average_1m() > 0) {
    parts.push_back(absl::StrFormat("load %.2f", env.load_average_1m()));
  }
  if (env.free_memory_bytes() > 0) parts.push_back(absl::StrCat("free memory ", env.free_memory_bytes() >> 20, " MiB"));
  if (!env.governor().empty()) parts.push_back(absl::StrCat("governor ", env.governor()));
  if (env.other_cpu_measured()) parts.push_back(absl::StrFormat("other CPU %.1f %%", env.other_cpu_percent()));
  if (env.trip_point_crossed()) parts.push_back("trip point crossed");
  if (env.gate_failures_size() > 0)
    parts.push_back(absl::StrCat("gates failed: ", absl::StrJoin(env.gate_failures(), "; ")));
  if (env.gates_not_checked_size() > 0)
    parts.push_back(absl::StrCat("gates not checked: ", absl::StrJoin(env.gates_not_checked(), "; ")));
  return parts.empty() ? "no conditions recorded" : absl::StrJoin(parts, ", ");
}

namespace {

// The smallest and largest of the values seen (none: empty).
struct Range {
  bool known = false;
  double low = 0;
  double high = 0;
  void Add(double v) {
    low = known ? std::min(low, v) : v;
    high = known ? std::max(high, v) : v;
    known = true;
  }
  // "0.42–2.31" (or "0.42" when equal) with `format` applied to each end.
  std::string Text(const absl::FormatSpec<double>& format) const {
    const std::string lo = absl::StrFormat(format, low);
    const std::string hi = absl::StrFormat(format, high);
    return lo == hi ? lo : absl::StrCat(lo, "–", hi);
  }
};

}  // namespace

std::string FormatConditionsRange(const std::vector<const v1::EnvSnapshot*>& snapshots) {
  Range battery, battery_temperature, hottest, load, free_mib, other_cpu;
  bool charging = false;
  std::vector<std::string> governors;
  int trip_points = 0, gate_failures = 0, not_checked = 0;
  for (const v1::EnvSnapshot* env : snapshots) {
    if (env->battery_level_percent() >= 0 && (env->battery_level_percent() > 0 || env->battery_charging())) {
      battery.Add(env->battery_level_percent());
      charging = charging || env->battery_charging();
    }
    if (env->battery_temperature_known()) battery_temperature.Add(env->battery_temperature_c());
    if (env->temperatures_c_size() > 0) {
      hottest.Add(*std::max_element(env->temperatures_c().begin(), env->temperatures_c().end()));
    }
    if (env->unix_time_ns() != 0 || env->load_average_1m() > 0) load.Add(env->load_average_1m());
    if (env->free_memory_bytes() > 0) free_mib.Add(static_cast<double>(env->free_memory_bytes() >> 20));
    if (!env->governor().empty() && std::find(governors.begin(), governors.end(), env->governor()) == governors.end()) {
      governors.push_back(env->governor());
    }
    if (env->other_cpu_measured()) other_cpu.Add(env->other_cpu_percent());
    if (env->trip_point_crossed()) ++trip_points;
    if (env->gate_failures_size() > 0) ++gate_failures;
    if (env->gates_not_checked_size() > 0) ++not_checked;
  }
  std::vector<std::string> parts;
  if (battery.known)
    parts.push_back(absl::StrCat("battery ", battery.Text("%.0f"), " %", charging ? " (charging)" : ""));
  if (battery_temperature.known) parts.push_back(absl::StrCat("battery ", battery_temperature.Text("%.1f"), " °C"));
  if (hottest.known) parts.push_back(absl::StrCat("hottest zone ", hottest.Text("%.1f"), " °C"));
  if (load.known) parts.push_back(absl::StrCat("load ", load.Text("%.2f")));
  if (free_mib.known) parts.push_back(absl::StrCat("free memory ", free_mib.Text("%.0f"), " MiB"));
  if (!governors.empty()) parts.push_back(absl::StrCat("governor ", absl::StrJoin(governors, "/")));
  if (other_cpu.known) parts.push_back(absl::StrFormat("other CPU ≤ %.1f %%", other_cpu.high));
  if (trip_points > 0) parts.push_back(absl::StrCat("trip point crossed in ", trip_points, " of ", snapshots.size()));
  if (gate_failures > 0) parts.push_back(absl::StrCat("gates failed in ", gate_failures, " of ", snapshots.size()));
  if (not_checked > 0) {
    parts.push_back(absl::StrCat("gates not checked in ", not_checked, " of ", snapshots.size()));
  }
  return parts.empty() ? "no conditions recorded" : absl::StrJoin(parts, ", ");
}

std::vector<std::string> GatesNotCheckedLines(const std::vector<const v1::EnvSnapshot*>& snapshots) {
  std::vector<std::pair<std::string, int>> seen;
  for (const v1::EnvSnapshot* env : snapshots) {
    for (const std::string& gate : env->gates_not_checked()) {
      auto it = std::find_if(seen.begin(), seen.end(), [&](const auto& s) { return s.first == gate; });
      if (it == seen.end()) {
        seen.emplace_back(gate, 1);
      } else {
        ++it->second;
      }
    }
  }
  std::vector<std::string> lines;
  for (const auto& [gate, count] : seen)
    lines.push_back(absl::StrCat(gate, " (", count, " of ", snapshots.size(), ")"));
  return lines;
}

}  // namespace fleetmark::engine
