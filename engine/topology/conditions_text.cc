#include "engine/topology/conditions_text.h"

#include <algorithm>
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
  return parts.empty() ? "no conditions recorded" : absl::StrJoin(parts, ", ");
}

}  // namespace fleetmark::engine
