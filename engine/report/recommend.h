// `fleetmark recommend`: the answer to "which strategy for a task like this one, on this
// device?" read off the device's strategy map (strategy_map.h: the one verdict rule,
// engine/measure/verdict.h) at a task profile such as `cpu_us=50,wait_us=2000`.
//
//   FLEETMARK_ASSIGN_OR_RETURN(report::Profile profile, report::ParseProfile("cpu_us=50,wait_us=2000"));
//   std::vector<report::Recommendation> answers = report::Recommend(BuildStrategyMap(results), profile);
//
// Only measured points answer. A profile is *near* a sweep when, on every swept
// parameter, it lies on a measured value or between two adjacent measured values (on a
// log scale these bracket it; nothing is interpolated), and every parameter the profile
// gives that the sweep does not sweep equals the value it was measured at. The answer
// is then the verdicts of the bracketing points (one point, two, or four corners of a
// two-parameter sweep): one decided winner at all of them is the answer; different
// decided winners mean the profile lies at a crossover (both winners are reported, with
// the map's crossover estimate); every point decided or equivalent with no two winners
// is "equivalent"; otherwise the answer is undecided, with the first open point's
// verdict as the reason. Anything else is "not measured near
// this profile", with the reason (the measured range, the fixed value).
//
// Pure functions; safe from any thread.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "engine/report/strategy_map.h"

namespace fleetmark::report {

// A task profile: values of the synthetic workload's parameters (plan.proto's
// SyntheticParams) in the parameters' own units, in the order given.
struct Profile {
  std::vector<std::pair<std::string, double>> params;  // ("cpu_ns", 50000), ("wait_us", 2000)
  // The key each of `params` was given as ("cpu_us"), same order, for messages that
  // name what the user wrote; empty for a profile built in code.
  std::vector<std::string> keys;
};

// How many of its parameter's units one of `key`'s is (cpu_us: 1000 cpu_ns); 1 for a
// parameter's own name or an unknown key.
double ProfileKeyScale(absl::string_view key);

// The keys ParseProfile accepts, for messages and help: each parameter under its own
// name and in other units (cpu_us = 1000 cpu_ns, wait_ms = 1000 wait_us, alloc_kib,
// touch_mib).
std::string AllowedProfileKeys();

// Parses "key=value[,key=value...]" (spaces around terms allowed): each key a parameter
// (AllowedProfileKeys), each value a plain decimal number (digits and at most one '.':
// no sign, exponent, hex or "inf") whose converted value lies in the parameter's plan
// range (engine/scenarios/param_rules.h) and does not round to 0 in the parameter's
// whole units unless it is 0. InvalidArgument naming the key as written and the allowed
// keys or range, e.g.
//   `cpu_us: a plain decimal number (e.g. 50 or 0.5) in 0 <= cpu_us <= 1000000 (cpu_ns <= 1000000000), got "-5"`,
//   `cpu_us: 0.0001 is 0.1 cpu_ns, which rounds to 0 (...); give 0 or at least 0.0005 cpu_us`;
// an empty profile, a term without '=' and a parameter given twice (in any unit) are
// refused too. `limits` (may be null; not retained) narrows the range of some
// parameters for a caller that can measure less than a plan allows (`recommend
// --measure`, recommend_plan.h MeasureProfileLimits): a value above it is refused with
// that range, e.g. `cpu_us: 0 <= cpu_us <= 10000 for --measure (cpu_ns <= 10000000), got
// "99999999"`, never with the wider plan range.
struct ProfileLimits {
  std::vector<std::pair<std::string, double>> max;  // parameter (cpu_ns, ...) -> its largest value, in its unit
  std::string why;                                  // after the range, e.g. "for --measure"
};
absl::StatusOr<Profile> ParseProfile(absl::string_view text, const ProfileLimits* limits = nullptr);

// "0 <= <key> <= <max in key's units>[ <why>][ (<param> <= <max>)]": the range
// ParseProfile and BuildBracketPlan quote for a parameter given as `key` (its unit:
// ProfileKeyScale) whose largest value is `max` (in the parameter's unit).
std::string ProfileRangeText(absl::string_view key, absl::string_view param, double max, absl::string_view why);

// "cpu_us=50, wait_us=2000": each parameter under the key it was given as (Profile.keys;
// its own name when none), its value in that key's units.
std::string FormatProfile(const Profile& profile);

enum class Verdict {
  kWinner,       // one strategy decided fastest at every bracketing point
  kEquivalent,   // the bracketing points are equivalent (or decided for one of the set)
  kUndecided,    // some bracketing point is undecided or provisional: `reason` says which
  kCrossover,    // the bracketing points have different decided winners
  kNotMeasured,  // not measured near this profile: `reason` says why
};

// "winner", "equivalent", "undecided", "crossover", "not_measured".
absl::string_view VerdictName(Verdict verdict);

// The answer for one group of the map (a workload with its io mode and placement).
struct Recommendation {
  std::string group;  // MapPoint::group; "" when the device measured no synthetic sweep
  std::vector<std::string> swept;
  Verdict verdict = Verdict::kNotMeasured;
  // kNotMeasured: e.g. "wait_us=20000 is outside the measured 10..10000"; kUndecided: the
  // open point and its verdict ("wait_us=100: undecided: ...").
  std::string reason;
  // The measured points the answer comes from (the one point the profile lies on, or the
  // bracketing points), in map order. Empty for kNotMeasured.
  std::vector<MapPoint> points;
  // kWinner: the winner, and its paired ratio over the runner-up at the bracketing point
  // where it is smallest (MapPoint's ratio and its 95% interval).
  std::string best, runner_up;
  double ratio = 0, ratio_low = 0, ratio_high = 0;
  // kEquivalent / kUndecided: every strategy still open at some bracketing point, the
  // leaders first.
  std::vector<std::string> tied;
  // kCrossover: the map's crossovers between the bracketing points.
  std::vector<Crossover> crossovers;
};

// One Recommendation per synthetic group of `map` that sweeps at least one parameter,
// in map order; a single kNotMeasured one (group "") when there is none.
std::vector<Recommendation> Recommend(const StrategyMap& map, const Profile& profile);

// The answers of one device.
struct DeviceRecommendations {
  std::string device;  // agent or host name
  std::vector<Recommendation> answers;
};

// A table: one row per device and group (answer, margin over the runner-up with its CI,
// the points it comes from), headed by the profile and followed by what "near" means.
// Device and group names are escaped for a terminal.
std::string FormatRecommendations(const Profile& profile, const std::vector<DeviceRecommendations>& devices);

// The answer in one sentence, from the answer's own fields (no rule of its own):
//   "Use fixed_pool_io: 1.50x [1.45x, 1.55x] faster than fixed_pool_cpu at the measured
//    points around the profile."
//   "Any of coroutine, fiber: equivalent within 2.0 % at the measured points around the profile."
//   "Not decided between a, b: wait_us=100: undecided: <the point's reason>."
//   "At a crossover: fixed_pool_cpu / fixed_pool_io (fixed_pool_io overtakes fixed_pool_cpu at wait_us ~215)."
//   "Not measured near this profile: wait_us=20000 is outside the measured 10..10000."
std::string AnswerSentence(const Recommendation& answer);

// The same as JSON (snake_case; ratios unbounded above are null), for tools:
//   {"profile": {"cpu_ns": 50000, ...}, "near": "...", "devices": [{"device": "vm",
//    "answers": [{"group", "swept", "verdict", "answer" (AnswerSentence), "reason", "best",
//    "runner_up", "ratio", "ratio_low", "ratio_high", "tied", "margin",
//    "points": [MapPointJson...], "crossovers": [CrossoverJson...]}]}]}
// RecommendationsJsonValue is the document, RecommendationsJson its text (indented, "\n"
// at the end); the web API's /api/v1/recommend answers with the same document.
nlohmann::json RecommendationsJsonValue(const Profile& profile, const std::vector<DeviceRecommendations>& devices);
std::string RecommendationsJson(const Profile& profile, const std::vector<DeviceRecommendations>& devices);

}  // namespace fleetmark::report
