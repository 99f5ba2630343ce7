// Fleet A/B: two cases of one run compared on every device, B against A. Per device the
// ratio of B's time to A's with a 95% CI, and a fleet summary (faster on k devices,
// slower on m, tie on t; the geometric-mean ratio with a CI over the devices).
//
//   absl::StatusOr<CasePair> pair = MatchCases({"direct", "fixed_pool"}, case_ids);
//   DeviceAb ab = CompareAb("pixel-7", a_result, b_result);
//   FleetAb fleet = SummarizeFleet({ab, ...});
//
// Method. Per device, A and B are the two contenders of the one verdict rule
// (engine/measure/verdict.h, DecideGroup; strategy_map.h's EntryOf): their process
// medians paired by round, the moderated t interval of the paired log ratios, the margin
// from the device's residual spread (SpreadOf the two cases, unless options.spread).
// B/A is that paired ratio and its interval (with the leader B it is inverted); B is
// "faster" / "slower" only when the pair is decided (the slower one slower in every
// paired round and its interval above 1 + margin, from >= 3 processes each),
// "equivalent" when the interval lies within the margin, "undecided" otherwise
// (provisional with fewer processes: never "faster" from one process). The fleet's ratio
// is the geometric mean of the devices' ratios with the Student-t interval over the
// devices' log ratios (Fleming & Wallace 1986 for the geometric mean) — a question about
// the fleet, not one device — and its verdict is RatioVerdict below.
// Pure functions; safe from any thread.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "engine/report/strategy_map.h"
#include "fleetmark/v1/result.pb.h"

namespace fleetmark::report {

// The two case ids --cases named.
struct CasePair {
  std::string a, b;
};

// Matches each of `items` (exactly two) against `case_ids` (a run's cases): an item
// equal to a case id is that case; otherwise the cases whose id holds the item as a run
// of whole '/'-separated parts ("fixed_pool_io", "arithmetic/blocking/direct") — it
// must be exactly one. InvalidArgument naming --cases for a wrong count, the same case
// twice, an unknown item (with up to 5 close case ids by edit distance) and an
// ambiguous one (with the cases it matches, up to 5).
absl::StatusOr<CasePair> MatchCases(const std::vector<std::string>& items, const std::vector<std::string>& case_ids);

// Up to `limit` of `candidates` closest to `item` (Levenshtein distance, ties by name).
std::vector<std::string> CloseMatches(const std::string& item, const std::vector<std::string>& candidates,
                                      size_t limit = 5);

enum class AbVerdict { kFaster, kSlower, kEquivalent, kUndecided, kUnmeasured };  // B relative to A
// "faster", "slower", "equivalent", "undecided", "not measured".
std::string AbVerdictName(AbVerdict verdict);

// B / A on one device.
struct DeviceAb {
  std::string device;
  // Each side's median (ns; 0 when not measured ok) and its status text ("" when ok).
  double a_median_ns = 0, b_median_ns = 0;
  std::string a_status, b_status;
  double ratio = 0;          // B / A: < 1 means B is faster
  double low = 0, high = 0;  // its 95% interval; high = inf when unbounded
  int paired_rounds = 0;     // paired rounds of the interval; < 2: no interval (low 0, high inf)
  std::string method;        // "paired rounds (n=5, moderated t)", "1 paired round: provisional, no interval"
  std::string reason;        // the verdict's reason (GroupVerdict::reason)
  AbVerdict verdict = AbVerdict::kUnmeasured;
};

// B / A of one device's results of the two cases (either may be null: not measured).
DeviceAb CompareAb(const std::string& device, const v1::CaseResult* a, const v1::CaseResult* b,
                   const MapOptions& options = {});

// The fleet's verdict of a ratio and its interval over devices: kFaster when high < 1 and
// A / B - 1 exceeds the margin, kSlower when low > 1 and ratio - 1 exceeds it,
// kEquivalent when [low, high] lies within [1 / (1 + margin), 1 + margin], kUndecided
// otherwise.
AbVerdict RatioVerdict(double ratio, double low, double high, const MapOptions& options = {});

struct FleetAb {
  int faster = 0, slower = 0, equivalent = 0, undecided = 0, unmeasured = 0;  // devices
  int devices = 0;                                                            // with a ratio
  double ratio = 0, low = 0, high = 0;  // geometric mean, 95% CI (inf high: < 2 devices)
  AbVerdict verdict = AbVerdict::kUnmeasured;
};
FleetAb SummarizeFleet(const std::vector<DeviceAb>& devices, const MapOptions& options = {});

// "B (fixed_pool_io) vs A (direct)" tables: one row per device, then the fleet line.
std::string FormatAb(const CasePair& cases, const std::vector<DeviceAb>& devices, const FleetAb& fleet);

// {"a", "b", "devices": [{"device", "a_median_ns", "b_median_ns", "a_status",
//  "b_status", "ratio", "ratio_low", "ratio_high" (null: unbounded), "paired_rounds",
//  "method", "reason", "verdict"}], "fleet": {"faster", "slower", "equivalent", "undecided",
//  "not_measured",
//  "devices", "ratio", "ratio_low", "ratio_high", "verdict"}, "min_margin"}; the web
// API and `fleetmark compare --cases --format json` print this shape.
nlohmann::json AbJson(const CasePair& cases, const std::vector<DeviceAb>& devices, const FleetAb& fleet,
                      const MapOptions& options = {});

}  // namespace fleetmark::report
