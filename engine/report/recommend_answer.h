// The answer of `fleetmark recommend --measure` (and of `recommend --workload`): one
// sentence across io modes — "use coroutine with suspending waits; if your waits must
// block, fixed_pool with 64 threads" — then per io mode the verdict at the profile and
// at its neighbours, each with its interval, and what was assumed.
//
//   BracketPlan b = *BuildBracketPlan(profile, {});      // recommend_plan.h
//   ... run b.plan, collect one device's results ...
//   DeviceAnswer a = AnswerBracket(b, "vm", results);
//   std::cout << a.sentence << "\n" << FormatDeviceAnswers(b, {a});
//
// Every verdict is the strategy map's one rule (strategy_map.h: DecidePoint and
// VerdictText); this file only picks the points and says them. Across io modes the
// fastest strategy of each is compared by the same rule (a two-entry point): suspending
// waits are recommended first only when that rule says they win; when the two tie,
// both are named as equals; when blocking wins, blocking first.
//
// Pure; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "engine/report/recommend.h"
#include "engine/report/recommend_plan.h"
#include "engine/report/strategy_map.h"
#include "fleetmark/v1/result.pb.h"
#include "nlohmann/json.hpp"

namespace fleetmark::report {

// One measured point of an io mode's answer.
struct AnswerPoint {
  std::string role;  // BracketPoint::role ("profile", "wait_us x2"), or the group for --workload
  std::vector<std::pair<std::string, double>> params;
  bool measured = false;  // false: no strategy measured ok there (`point` is empty)
  MapPoint point;
};

// What one io mode's answer is, at the profile's point.
enum class AnswerKind {
  kWinner,       // the map's rule decides a winner there
  kOpen,         // it does not (a tie, equivalent or undecided: `tied` and `verdict_text`)
  kNotMeasured,  // nothing measured ok there: `reason`
};

// "winner", "open", "not_measured".
const char* AnswerKindName(AnswerKind kind);

// The answer of one io mode: the verdict at its first point (the profile), the others
// (the neighbours) as evidence.
struct IoModeAnswer {
  std::string io_mode;  // "blocking" | "suspending"
  AnswerKind verdict = AnswerKind::kNotMeasured;
  std::string verdict_text;    // the profile point's VerdictText (strategy_map.h)
  std::string reason;          // kNotMeasured: why; kOpen and undecided: the verdict's reason
  std::string best;            // label of the fastest at the profile ("" when not measured)
  v1::StrategySpec best_spec;  // its spec (name, threads) as measured
  std::string runner_up;
  double ratio = 0, ratio_low = 0, ratio_high = 0;  // runner-up / best with its 95% interval
  std::vector<std::string> tied;                    // kOpen: the open labels, fastest first
  std::vector<std::string> tied_text;               // kOpen: the same as DescribeStrategy says them
  std::vector<v1::StrategySpec> tied_specs;         // kOpen: their specs
  // kOpen: "equivalent within 2.0 %" (the point's margin), else "not told apart"
  // (undecided or provisional: more processes would be needed).
  std::string open_note;
  bool equivalent = false;  // kOpen: the open strategies are equivalent (not undecided)
  // The neighbours whose decisive winner is another strategy (roles), when the
  // profile's verdict is kWinner.
  std::vector<std::string> changes_at;
  std::vector<AnswerPoint> points;  // the profile first
};

struct DeviceAnswer {
  std::string device;
  std::string sentence;                // one sentence, no final period
  std::vector<IoModeAnswer> io_modes;  // in the order the sentence names them
};

// A strategy as the sentence names it: "fixed_pool with 64 threads", "fixed_pool with
// one thread per CPU" (a pool sized by default), "coroutine" (strategies whose size is
// their default or fixed). Asks the registry (registry.h) for the traits; an unknown
// name is said as is.
std::string DescribeStrategy(const v1::StrategySpec& spec);

// The answer of one io mode from `points` (the profile's first; each with its role and
// the map point found there, or measured = false). `specs`: each label's spec.
IoModeAnswer AnswerIoMode(const std::string& io_mode, std::vector<AnswerPoint> points,
                          const std::vector<v1::StrategySpec>& specs);

// The sentence over the io modes' answers (see the file comment); sorts `answers`
// into the order it names them.
std::string OverallSentence(std::vector<IoModeAnswer>& answers);

// The answer of one device from its results of `bracket.plan` (other results are
// ignored).
DeviceAnswer AnswerBracket(const BracketPlan& bracket, const std::string& device,
                           const std::vector<v1::CaseResult>& results);

// The answer for a fixed workload (e.g. S1's "network") from a run's results: per io
// mode the group batch/WORKLOAD/IO_MODE/any. A device that measured none says so in its
// sentence.
DeviceAnswer AnswerWorkload(const std::string& workload, const std::string& device,
                            const std::vector<v1::CaseResult>& results);

// The text: per device its sentence, then a table of io mode, point, fastest, ratio
// over the runner-up [95% CI] and verdict; then "assumed: ..." when `assumed` is not
// empty. Names are escaped for a terminal.
std::string FormatDeviceAnswers(const std::vector<DeviceAnswer>& answers, const std::string& assumed);

// JSON: {"device", "sentence", "io_modes": [{"io_mode", "verdict" (AnswerKindName),
// "verdict_text", "reason", "best",
// "strategy": {"name", "threads"}, "runner_up", "ratio", "ratio_low", "ratio_high"
// (null when unbounded or no winner), "tied", "changes_at", "points": [{"role",
// "params": {...}, "measured", "verdict_text", ...MapPointJson}]}]}.
nlohmann::json DeviceAnswerJson(const DeviceAnswer& answer);

// {"profile": {...}, "assumed": {"tasks", "io_threads", "text"}, "plan": "recommend",
//  "devices": [DeviceAnswerJson...]}
std::string BracketAnswersJson(const BracketPlan& bracket, const std::vector<DeviceAnswer>& answers);

}  // namespace fleetmark::report
