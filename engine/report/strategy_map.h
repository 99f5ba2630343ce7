// The strategy map of one device: for each group of batch cases that differ only in
// their strategy (a workload, and for the synthetic workload a sweep point), the verdict
// of the one rule (engine/measure/verdict.h, DecideGroup: paired log ratios over the
// processes of each round, a moderated t interval, the device's margin): decided (a
// winner, with its paired ratio and interval over the runner-up), equivalent within the
// margin, undecided (with the reason) or provisional (too few processes); along each
// swept parameter, the crossovers where the decided winner changes, with the interval
// that brackets them. Answers "which strategy for my kind of task on this device?" from
// measured points only.
//
//   report::StrategyMap map = report::BuildStrategyMap(results_of_one_agent);
//   std::cout << report::FormatStrategyMap(map);
//
// Pure functions; safe from any thread.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "engine/measure/contention_evidence.h"
#include "engine/measure/verdict.h"
#include "fleetmark/v1/result.pb.h"

namespace fleetmark::report {

// One strategy's measurement at a point: its per-process medians with their rounds (what
// the verdict compares), their centre (what it ranks by, and what the map shows), and
// the pooled median with its within-process 95% CI (kept for JSON readers).
struct MapEntry {
  std::string strategy;  // label
  // The geometric mean of the usable process medians (> 0, finite), ns: the statistic
  // DecideGroup ranks by. 0 when none is usable.
  double centre_ns = 0;
  double median_ns = 0;
  double ci_low_ns = 0;
  double ci_high_ns = 0;  // +inf when the result has no CI (too few samples)
  uint64_t samples = 0;
  double fastest_ns = 0;  // its fastest sample (Statistics.min_ns); 0 = unknown
  // One median per fresh process (ns) and the round each ran in (EntryOf: a result
  // without process_medians_ns is one process, round 1, whose median is the pooled one).
  std::vector<double> process_medians_ns;
  std::vector<uint32_t> rounds;
  bool contended = false;  // measured while other work used the device
  // Other processes' share of the device's CPU during the case (0..1, CaseResult's
  // other_cpu_share), and whether it was measured in quick mode: the conditions the
  // verdict rests on, shown beside it (recommend, the web view).
  double other_cpu_share = 0;
  bool quick = false;
  // The verdict's second contention bound (engine/measure/contention_evidence.h): wake-ups
  // and preemptions per repetition (-1 = unknown) and the wait of each, ns (0 = not measured).
  engine::WaitEpisodes episodes;
  double wakeup_delay_ns = 0;
  double preemption_delay_ns = 0;
};

// The entry of a batch result (any status; the caller filters): process_medians_ns and
// process_rounds (when empty, process i is round i + 1; with no process medians but a
// median, one process whose median is stats.median_ns), their centre, contended,
// other_cpu_share, quick, the median and its CI (a CI that was not achieved is [0, +inf]).
MapEntry EntryOf(const v1::CaseResult& result);

// One point: the ok batch results of one group, decided by DecideGroup.
struct MapPoint {
  std::string group;                                  // "batch/synthetic/blocking/any", swept params left out
  std::vector<std::string> swept;                     // names of the swept parameters, in sweep order
  std::vector<std::pair<std::string, double>> point;  // (swept parameter, value), in sweep order
  // The synthetic workload: true, and `fixed` holds its numeric parameters that are not
  // swept (name, value in the parameter's unit), in field order. False and empty for
  // the fixed workloads.
  bool synthetic = false;
  std::vector<std::pair<std::string, double>> fixed;
  // The verdict's leader first (smallest geometric mean of process medians), then the
  // others by their paired ratio to it, ascending. Empty: nothing measured ok.
  std::vector<MapEntry> ranked;
  engine::VerdictKind kind = engine::VerdictKind::kNone;
  std::string reason;  // GroupVerdict::reason
  double margin = 0;   // the margin the point was decided with (fraction)
  // The runner-up against the leader: its paired ratio (>= 1 for a correct leader;
  // runner-up / leader) and 95% interval over `pairs` paired rounds (low 0 and high
  // +inf when pairs < 2: no interval). 0 when there is no runner-up.
  double ratio = 0, ratio_low = 0, ratio_high = 0;
  int pairs = 0;
  int fewest_pairs = 0;  // the fewest paired rounds of any other strategy with the leader
  // No decisive winner: two or more strategies and the kind is not kDecided.
  bool tie = false;
  // The strategies still open (not decided slower than the leader), the leader first:
  // the equivalent set, or the candidates of an undecided / provisional point; only the
  // winner when decided.
  std::vector<std::string> tied;

  const std::string& winner() const { return ranked.front().strategy; }
  // The winner of a decided point; "" otherwise.
  std::string decisive_winner() const {
    return kind == engine::VerdictKind::kDecided ? ranked.front().strategy : std::string();
  }
  // Whether ratio_low / ratio_high bound the ratio (two or more paired rounds).
  bool has_interval() const { return pairs >= 2 && ratio_low > 0 && ratio_high < 1e300; }
};

// Where, along swept parameter `param` (the other swept parameters fixed at
// `fixed`), the decisive winner changes from `from` to `to`: somewhere in
// [low, high], the last value where `from` won and the first where `to` won (ties in
// between are inside the interval). `estimate`: where the two strategies' medians
// cross, interpolated linearly in log(param) (linearly if a bound is 0) between the
// adjacent points whose ratio of centres (MapEntry::centre_ns) changes sign; within
// [low, high].
struct Crossover {
  std::string group;
  std::string param;
  std::vector<std::pair<std::string, double>> fixed;
  std::string from, to;
  double low = 0, high = 0, estimate = 0;
};

// How points are decided (engine/measure/verdict.h, VerdictOptions): the margin scales
// with the device's residual spread (the noise pairing by round does not cancel);
// `spread` 0 = BuildStrategyMap measures it over all its results (SpreadOf), DecidePoint
// then uses kDefaultSpread. `spread_dof`: the prior's degrees of freedom ν0 (NaN =
// unknown). Both as ResidualSpread's prior_sigma and prior_dof.
struct MapOptions {
  double min_margin = 0.02;  // fraction (0.02 = 2 %), >= 0
  int min_processes = 3;     // paired rounds before any verdict
  double spread = 0;
  double spread_dof = std::numeric_limits<double>::quiet_NaN();
};

struct StrategyMap {
  std::vector<MapPoint> points;  // groups in first-seen order, points by swept values
  std::vector<Crossover> crossovers;
};

// The map of `results` (one device's): batch results with status ok and a median > 0;
// other results are left out. Groups keep the order of their first result; points of a
// group are by their swept values, numerically. The device's spread is measured once
// over every kept result (SpreadOf) unless options.spread is given.
StrategyMap BuildStrategyMap(const std::vector<v1::CaseResult>& results, const MapOptions& options = {});

// The residual spread of `results` (engine::DeviceSpread): the ok batch results grouped
// into points by run, job and CasePointKey (a strategy seen twice in one point — results
// of two runs or devices merged — starts another group, as rounds pair only within one
// run), each result a contender with its process medians and rounds (EntryOf).
engine::ResidualSpread SpreadOf(const std::vector<const v1::CaseResult*>& results);

// `options` with spread and spread_dof from SpreadOf(results), unless spread is given.
MapOptions WithSpreadOf(MapOptions options, const std::vector<const v1::CaseResult*>& results);

// Decides one point whose `ranked` entries are filled (any order) with DecideGroup
// (options.spread, or kDefaultSpread when 0): orders `ranked` (leader first) and sets
// kind, reason, margin, ratio, its interval, pairs, tie and tied. For callers that build
// points of their own (the Compare page ranks devices this way).
void DecidePoint(MapPoint& point, const MapOptions& options = {});

// The verdict of a decided point, one line:
//   "fixed_pool wins (1.82x [1.61x, 2.05x] over direct)"
//   "equivalent within 3.0 %: a, b, c"
//   "undecided: <reason>"
//   "provisional: 2 processes — not a verdict"
//   "only one strategy", "nothing measured".
std::string VerdictText(const MapPoint& point);

// The runner-up's ratio with its interval ("1.82x [1.61x, 2.05x]"), or the ratio alone
// when there is no interval (never "[0.00x, inf]"); "-" without a runner-up.
std::string PointRatioText(const MapPoint& point);

// A compact table per group, one row per point (swept values, leader and its centre with
// its number of processes, runner-up and its centre, paired ratio [95% interval],
// verdict), then the group's crossovers; a last line says what "centre" is. "" for an
// empty map.
std::string FormatStrategyMap(const StrategyMap& map);

// "2.00x" (two decimals), "inf" for an infinite ratio.
std::string FormatRatio(double ratio);
// "2.00x [1.64x, 2.44x]": a ratio and its 95% interval.
std::string FormatRatioWithCi(double ratio, double low, double high);
// A swept parameter's value: integers in full (100000, not 1e+05), else the shortest
// round-trip decimal.
std::string FormatParamValue(double value);

}  // namespace fleetmark::report
