// The answer across devices (`fleetmark compare --agents`, the Compare page): per
// workload and sweep point, each device's strategy-map point (the best strategy or the
// verdict of the one rule, strategy_map.h / engine/measure/verdict.h); per memory / fan-out / load case each
// device's result (scenario_metrics.h); the unsupported cases counted, not listed; and
// the fleet A/B of two cases over the devices (ab_compare.h).
//
//   DeviceAnswers a = BuildDeviceAnswers({{"vm", vm_results}, {"pixel", pixel_results}});
//
// The results are borrowed: they must outlive the answer. Pure; safe from any thread.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/report/ab_compare.h"
#include "engine/report/strategy_map.h"
#include "fleetmark/v1/result.pb.h"

namespace fleetmark::report {

// One device: its name and results (borrowed).
struct DeviceCases {
  std::string name;
  std::vector<const v1::CaseResult*> results;
};

struct AnswerRow {
  std::string label;                             // the group, then the swept values: "... wait_us=100"
  std::vector<std::optional<MapPoint>> devices;  // per device; empty: not measured there
};

struct DeviceAnswers {
  std::vector<AnswerRow> points;  // in first-seen order
  // Memory / fan-out / load cases by case id, first-seen order; per device the result
  // or null.
  std::vector<std::pair<std::string, std::vector<const v1::CaseResult*>>> scenarios;
  // Batch cases that are not unsupported, by case id, the same way.
  std::vector<std::pair<std::string, std::vector<const v1::CaseResult*>>> batch;
  int unsupported = 0;  // unsupported results of every device
  std::map<std::string, int> unsupported_per_device;
  std::set<std::string> unsupported_strategies;  // their strategy labels
};

DeviceAnswers BuildDeviceAnswers(const std::vector<DeviceCases>& devices, const MapOptions& options = {});

// The point's VerdictText ("fixed_pool wins (1.12x [1.05x, 1.20x] over direct)",
// "equivalent within 3.0 %: a, b", "undecided: ...", "provisional: ..."), or
// "a (only one strategy, 3 processes)"; "-" for a point without entries.
std::string AnswerCell(const MapPoint& point);

// {"points": [{"point", "devices": [MapPointJson + "answer": AnswerCell | null]}],
//  "scenarios": [{"case_id", "devices": [{"status", "text", "metrics": {name: {"value",
//  "unit", "lower_is_better"}}} | null]}], "unsupported": {"cases", "per_device": {..},
//  "strategies": [...]}, "min_margin"}; per-device arrays in the order of `devices`.
nlohmann::json DeviceAnswersJson(const DeviceAnswers& answers, const MapOptions& options = {});

// Fleet A/B of `case_items` (two ids or labels, MatchCases over every device's case
// ids): each device's CompareAb and the fleet summary. InvalidArgument from MatchCases.
struct FleetAbAnswer {
  CasePair cases;
  std::vector<DeviceAb> devices;
  FleetAb fleet;
};
absl::StatusOr<FleetAbAnswer> CompareCasesOverDevices(const std::vector<std::string>& case_items,
                                                      const std::vector<DeviceCases>& devices,
                                                      const MapOptions& options = {});

}  // namespace fleetmark::report
