// The strategy map (strategy_map.h) as JSON, one shape for `fleetmark recommend
// --format json` and the web API's map endpoint: snake_case fields, times in ns, a
// ratio bound or CI bound that is unbounded (no CI) as null.
//
//   nlohmann::json doc = report::StrategyMapJson(report::BuildStrategyMap(results));
//
// Pure functions; safe from any thread.
#pragma once

#include <nlohmann/json.hpp>

#include "engine/report/strategy_map.h"

namespace fleetmark::report {

// {"group", "swept": [...], "point": {"wait_us": 316, ...}, "fixed": {...}, "winner",
//  "runner_up" ("" when alone), "ratio", "ratio_low", "ratio_high", "tie", "below_min_margin",
//  "min_margin" (fraction), "verdict" (VerdictText), "tied": [...],
//  "ranked": [{"strategy", "median_ns", "ci_low_ns", "ci_high_ns", "samples"}, ...]}
nlohmann::json MapPointJson(const MapPoint& point);

// {"group", "param", "fixed": {...}, "from", "to", "low", "high", "estimate"}
nlohmann::json CrossoverJson(const Crossover& crossover);

// {"points": [MapPointJson...], "crossovers": [CrossoverJson...]}
nlohmann::json StrategyMapJson(const StrategyMap& map);

}  // namespace fleetmark::report
