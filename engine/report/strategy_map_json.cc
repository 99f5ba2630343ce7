// MapPointJson, CrossoverJson, StrategyMapJson (strategy_map_json.h).
#include "engine/report/strategy_map_json.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace fleetmark::report {
namespace {

// A finite number, or null.
nlohmann::json Number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

nlohmann::json Params(const std::vector<std::pair<std::string, double>>& params) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, value] : params) out[name] = value;
  return out;
}

}  // namespace

nlohmann::json MapPointJson(const MapPoint& p) {
  nlohmann::json ranked = nlohmann::json::array();
  for (const MapEntry& e : p.ranked) {
    ranked.push_back({{"strategy", e.strategy},
                      {"centre_ns", e.centre_ns},
                      {"median_ns", e.median_ns},
                      {"ci_low_ns", Number(e.ci_low_ns)},
                      {"ci_high_ns", Number(e.ci_high_ns)},
                      {"samples", e.samples},
                      {"process_medians_ns", e.process_medians_ns},
                      {"rounds", e.rounds},
                      {"contended", e.contended},
                      {"other_cpu_share", e.other_cpu_share},
                      {"quick", e.quick}});
  }
  const bool interval = p.has_interval();
  return {{"group", p.group},
          {"swept", p.swept},
          {"point", Params(p.point)},
          {"fixed", Params(p.fixed)},
          {"winner", p.ranked.empty() ? std::string() : p.winner()},
          {"runner_up", p.ranked.size() >= 2 ? p.ranked[1].strategy : std::string()},
          {"kind", engine::VerdictKindName(p.kind)},
          {"reason", p.reason},
          {"margin", p.margin},
          {"ratio", p.ratio > 0 ? Number(p.ratio) : nlohmann::json(nullptr)},
          {"ratio_low", interval ? Number(p.ratio_low) : nlohmann::json(nullptr)},
          {"ratio_high", interval ? Number(p.ratio_high) : nlohmann::json(nullptr)},
          {"pairs", p.pairs},
          {"tie", p.tie},
          {"verdict", VerdictText(p)},
          {"tied", p.tied},
          {"ranked", std::move(ranked)}};
}

nlohmann::json CrossoverJson(const Crossover& c) {
  return {{"group", c.group}, {"param", c.param}, {"fixed", Params(c.fixed)}, {"from", c.from},
          {"to", c.to},       {"low", c.low},     {"high", c.high},           {"estimate", c.estimate}};
}

nlohmann::json StrategyMapJson(const StrategyMap& map) {
  nlohmann::json points = nlohmann::json::array(), crossovers = nlohmann::json::array();
  for (const MapPoint& p : map.points) points.push_back(MapPointJson(p));
  for (const Crossover& c : map.crossovers) crossovers.push_back(CrossoverJson(c));
  return {{"points", std::move(points)}, {"crossovers", std::move(crossovers)}};
}

}  // namespace fleetmark::report
