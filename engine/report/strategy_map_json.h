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

// {"group", "swept": [...], "point": {"wait_us": 316, ...}, "fixed": {...}, "winner" (the
//  leader), "runner_up" ("" when alone), "kind" ("decided", "equivalent", "undecided",
//  "provisional", "single", "none"), "reason", "margin" (fraction), "ratio" (runner-up /
//  leader, paired; null without a runner-up), "ratio_low", "ratio_high" (its 95% interval;
//  both null when there is none), "pairs", "tie" (no decided winner), "verdict"
//  (VerdictText), "tied": [...], "ranked": [{"strategy", "median_ns", "ci_low_ns",
//  "ci_high_ns", "samples", "process_medians_ns", "rounds", "contended", "other_cpu_share", "quick"}, ...]}
nlohmann::json MapPointJson(const MapPoint& point);

// {"group", "param", "fixed": {...}, "from", "to", "low", "high", "estimate"}
nlohmann::json CrossoverJson(const Crossover& crossover);

// {"points": [MapPointJson...], "crossovers": [CrossoverJson...]}
nlohmann::json StrategyMapJson(const StrategyMap& map);

}  // namespace fleetmark::report
