// BuildDeviceAnswers, AnswerCell, DeviceAnswersJson, CompareCasesOverDevices
// (device_answers.h).
#include "engine/report/device_answers.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "engine/report/case_names.h"
#include "engine/report/scenario_metrics.h"
#include "engine/report/strategy_map_json.h"
#include "engine/scenarios/registry.h"

namespace fleetmark::report {
namespace {

using engine::IsBatch;

std::string PointLabel(const MapPoint& p) {
  if (p.point.empty()) return p.group;
  std::vector<std::string> values;
  for (const auto& [name, value] : p.point) values.push_back(absl::StrCat(name, "=", FormatParamValue(value)));
  return absl::StrCat(p.group, " ", absl::StrJoin(values, ","));
}

// Appends `r` of device `d` to the row of `id` in `rows`.
void AddToRow(std::vector<std::pair<std::string, std::vector<const v1::CaseResult*>>>& rows,
              std::map<std::string, size_t>& index, const std::string& id, size_t d, size_t n,
              const v1::CaseResult* r) {
  auto [it, inserted] = index.try_emplace(id, rows.size());
  if (inserted) rows.emplace_back(id, std::vector<const v1::CaseResult*>(n, nullptr));
  rows[it->second].second[d] = r;
}

}  // namespace

DeviceAnswers BuildDeviceAnswers(const std::vector<DeviceCases>& devices, const MapOptions& options) {
  DeviceAnswers out;
  const size_t n = devices.size();
  std::map<std::string, size_t> point_index, scenario_index, batch_index;
  for (size_t d = 0; d < n; ++d) {
    std::vector<v1::CaseResult> copies;
    copies.reserve(devices[d].results.size());
    for (const v1::CaseResult* r : devices[d].results) copies.push_back(*r);
    for (MapPoint& p : BuildStrategyMap(copies, options).points) {
      const std::string label = PointLabel(p);
      auto [it, inserted] = point_index.try_emplace(label, out.points.size());
      if (inserted) out.points.push_back({label, std::vector<std::optional<MapPoint>>(n)});
      out.points[it->second].devices[d] = std::move(p);
    }
    for (const v1::CaseResult* r : devices[d].results) {
      if (r->status() == v1::CASE_STATUS_UNSUPPORTED) {
        out.unsupported_strategies.insert(StrategyLabel(r->spec()));
        ++out.unsupported_per_device[devices[d].name];
        ++out.unsupported;
        continue;
      }
      const std::string id = CaseKey(r->spec());
      if (IsBatch(r->spec())) {
        AddToRow(out.batch, batch_index, id, d, n, r);
      } else {
        AddToRow(out.scenarios, scenario_index, id, d, n, r);
      }
    }
  }
  return out;
}

std::string AnswerCell(const MapPoint& p) {
  if (p.ranked.empty()) return "-";
  const size_t processes = p.ranked.front().process_medians_ns.size();
  if (p.ranked.size() < 2) {
    return absl::StrCat(p.winner(), " (only one strategy, ", processes, processes == 1 ? " process)" : " processes)");
  }
  return VerdictText(p);
}

nlohmann::json DeviceAnswersJson(const DeviceAnswers& answers, const MapOptions& options) {
  nlohmann::json points = nlohmann::json::array();
  for (const AnswerRow& row : answers.points) {
    nlohmann::json per = nlohmann::json::array();
    for (const std::optional<MapPoint>& p : row.devices) {
      if (!p) {
        per.push_back(nullptr);
        continue;
      }
      nlohmann::json j = MapPointJson(*p);
      j["answer"] = AnswerCell(*p);
      per.push_back(std::move(j));
    }
    points.push_back({{"point", row.label}, {"devices", std::move(per)}});
  }
  nlohmann::json scenarios = nlohmann::json::array();
  for (const auto& [id, results] : answers.scenarios) {
    nlohmann::json per = nlohmann::json::array();
    for (const v1::CaseResult* r : results) {
      if (r == nullptr) {
        per.push_back(nullptr);
        continue;
      }
      nlohmann::json metrics = nlohmann::json::object();
      for (const ScenarioMetric& m : ScenarioMetrics(*r)) {
        metrics[m.name] = {{"value", m.value}, {"unit", m.unit}, {"lower_is_better", m.lower_is_better}};
      }
      per.push_back(
          {{"status", StatusWord(r->status())}, {"text", ScenarioMetricsText(*r)}, {"metrics", std::move(metrics)}});
    }
    scenarios.push_back({{"case_id", id}, {"devices", std::move(per)}});
  }
  return {{"min_margin", options.min_margin},
          {"points", std::move(points)},
          {"scenarios", std::move(scenarios)},
          {"unsupported",
           {{"cases", answers.unsupported},
            {"per_device", answers.unsupported_per_device},
            {"strategies",
             std::vector<std::string>(answers.unsupported_strategies.begin(), answers.unsupported_strategies.end())}}}};
}

absl::StatusOr<FleetAbAnswer> CompareCasesOverDevices(const std::vector<std::string>& case_items,
                                                      const std::vector<DeviceCases>& devices,
                                                      const MapOptions& options) {
  std::vector<std::string> ids;
  std::set<std::string> seen;
  for (const DeviceCases& d : devices) {
    for (const v1::CaseResult* r : d.results) {
      const std::string id = CaseKey(r->spec());
      if (seen.insert(id).second) ids.push_back(id);
    }
  }
  absl::StatusOr<CasePair> pair = MatchCases(case_items, ids);
  if (!pair.ok()) return pair.status();
  FleetAbAnswer out;
  out.cases = *pair;
  for (const DeviceCases& d : devices) {
    const v1::CaseResult *a = nullptr, *b = nullptr;
    for (const v1::CaseResult* r : d.results) {
      const std::string id = CaseKey(r->spec());
      if (id == pair->a) a = r;
      if (id == pair->b) b = r;
    }
    // The device's residual spread over all its results (the A/B pair alone would
    // leave the prior no evidence beyond the pair's own rounds).
    out.devices.push_back(CompareAb(d.name, a, b, WithSpreadOf(options, d.results)));
  }
  out.fleet = SummarizeFleet(out.devices, options);
  return out;
}

}  // namespace fleetmark::report
