// The strategy map of one device: for each group of batch cases that differ only in
// their strategy (a workload, and for the synthetic workload a sweep point), which
// strategy is fastest, the runner-up, their ratio with a confidence interval, and a tie
// when the CIs overlap; along each swept parameter, the crossovers where the winner
// changes, with the interval that brackets them. Answers "which strategy for my kind of
// task on this device?" from measured points only.
//
//   report::StrategyMap map = report::BuildStrategyMap(results_of_one_agent);
//   std::cout << report::FormatStrategyMap(map);
//
// Pure functions; safe from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "fleetmark/v1/result.pb.h"

namespace fleetmark::report {

// One strategy's measurement at a point: median and its 95% CI, ns.
struct MapEntry {
  std::string strategy;  // label
  double median_ns = 0;
  double ci_low_ns = 0;
  double ci_high_ns = 0;  // +inf when the result has no CI (too few samples)
  uint64_t samples = 0;
  double fastest_ns = 0;  // its fastest sample (Statistics.min_ns); 0 = unknown
};

// One point: the ok batch results of one group, ranked by median.
struct MapPoint {
  std::string group;                                  // "batch/synthetic/blocking/any", swept params left out
  std::vector<std::string> swept;                     // names of the swept parameters, in sweep order
  std::vector<std::pair<std::string, double>> point;  // (swept parameter, value), in sweep order
  // The synthetic workload: true, and `fixed` holds its numeric parameters that are not
  // swept (name, value in the parameter's unit), in field order. False and empty for
  // the fixed workloads.
  bool synthetic = false;
  std::vector<std::pair<std::string, double>> fixed;
  std::vector<MapEntry> ranked;  // fastest first; empty: nothing measured ok
  // runner-up median / winner median (>= 1) and its 95% interval, the ratio of the CI
  // bounds: [runner-up CI low / winner CI high, runner-up CI high / winner CI low]
  // (conservative: it holds when both CIs hold). 0 when there is no runner-up.
  double ratio = 0, ratio_low = 0, ratio_high = 0;
  // No winner: the CIs of the winner and the runner-up overlap (ratio_low <= 1), or
  // they separate but the margin (ratio - 1) is below MapOptions::min_margin.
  bool tie = false;
  // The tie is only the margin's: the CIs separate, the margin is below the minimum.
  bool below_min_margin = false;
  // The minimum margin this point was decided with (MapOptions::min_margin).
  double min_margin = 0;
  // Every strategy whose CI overlaps the winner's or whose median is within the
  // minimum margin of it, the winner first.
  std::vector<std::string> tied;

  const std::string& winner() const { return ranked.front().strategy; }
  // The winner when its CI separates from every other's (not a tie); "" otherwise.
  std::string decisive_winner() const { return ranked.empty() || tie ? std::string() : ranked.front().strategy; }
};

// Where, along swept parameter `param` (the other swept parameters fixed at
// `fixed`), the decisive winner changes from `from` to `to`: somewhere in
// [low, high], the last value where `from` won and the first where `to` won (ties in
// between are inside the interval). `estimate`: where the two strategies' medians
// cross, interpolated linearly in log(param) (linearly if a bound is 0) between the
// adjacent points whose median ratio changes sign; within [low, high].
struct Crossover {
  std::string group;
  std::string param;
  std::vector<std::pair<std::string, double>> fixed;
  std::string from, to;
  double low = 0, high = 0, estimate = 0;
};

// How a point is decided. The one rule of winner and tie (the map, recommend and the
// Compare page and `fleetmark compare` use it): a winner only when its CI separates
// from the runner-up's AND the runner-up is slower by more than `min_margin` (a
// fraction: 0.02 = 2 %); a result without a CI (n = 1) ties with everything.
struct MapOptions {
  double min_margin = 0.02;  // >= 0
};

struct StrategyMap {
  std::vector<MapPoint> points;  // groups in first-seen order, points by swept values
  std::vector<Crossover> crossovers;
};

// The map of `results` (one device's): batch results with status ok and a median > 0;
// other results are left out. Groups keep the order of their first result.
StrategyMap BuildStrategyMap(const std::vector<v1::CaseResult>& results, const MapOptions& options = {});

// Decides one point whose `ranked` entries are filled (any order): sorts them by
// median and sets ratio, ratio_low/high, tie, below_min_margin and tied by the rule of
// MapOptions. For callers that build points of their own (the Compare page).
void DecidePoint(MapPoint& point, const MapOptions& options = {});

// The verdict of a decided point: "<winner> wins", "tie: a, b" (with "(margin 1.2% <
// 2%)" when only the margin ties them), "only one strategy".
std::string VerdictText(const MapPoint& point);

// A compact table per group, one row per point (swept values, winner, runner-up,
// ratio [CI], verdict), then the group's crossovers. "" for an empty map.
std::string FormatStrategyMap(const StrategyMap& map);

// "2.00x" (two decimals), "inf" for an infinite ratio.
std::string FormatRatio(double ratio);
// "2.00x [1.64x, 2.44x]": a ratio and its 95% interval.
std::string FormatRatioWithCi(double ratio, double low, double high);
// A swept parameter's value: integers in full (100000, not 1e+05), else the shortest
// round-trip decimal.
std::string FormatParamValue(double value);

}  // namespace fleetmark::report
