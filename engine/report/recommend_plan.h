// The plan `fleetmark recommend --profile P --measure` runs: the smallest synthetic
// plan that brackets the task profile P, so the answer comes from points measured for
// it rather than from whatever sweep happened to be run.
//
//   FLEETMARK_ASSIGN_OR_RETURN(report::BracketPlan b, report::BuildBracketPlan(profile, {.tasks = 100}));
//   RunPlan(b.plan, {.quick = true}, ...);  // then AnswerBracket (recommend_answer.h)
//
// Points: the profile itself, and for each parameter it gives with a value > 0 one
// neighbour below (value / 2, rounded down) and one above (value × 2, capped at the
// parameter's plan maximum) with the other parameters at the profile's values: 1 + 2·n
// points for n such parameters (a cross, not a grid). In the plan: the first such
// parameter is swept over {below, profile, above}, each further one over {below,
// above} (one matrix per parameter and io mode, so no case id repeats).
//
// Io modes and contenders, asked of the strategy registry (registry.h), never by name:
// - `blocking`: the CPU-sized pool (each kPool strategy that uses `threads`, threads
//   0 = one per logical CPU) and the same pool IO-sized at each of `io_threads`
//   (a count above the batch's tasks is replaced by the task count: more threads than
//   tasks change nothing); when the profile never waits (wait_us 0 or not given) also
//   every strategy that runs tasks on the caller (Carrier::kCaller).
// - `suspending`: every strategy with a suspending wait, CPU-sized (threads 0); only
//   when the profile waits (wait_us > 0): without a wait the io mode changes nothing.
//
// Measurement: `measurement` holds default-mode settings (3 processes) and `quick` the
// quick ones `--measure` runs; both measure every contender in >= 3 processes.
//
// Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/report/recommend.h"
#include "fleetmark/v1/plan.pb.h"

namespace fleetmark::report {

// What the plan assumes; the answer states it ("assumed: 100 tasks per batch; thread
// counts tried 16, 64, 256").
struct BracketOptions {
  uint32_t tasks = 100;                              // tasks per batch: 1..kMaxBracketTasks
  std::vector<uint32_t> io_threads = {16, 64, 256};  // IO-sized pools' thread counts, each >= 1
};

inline constexpr uint32_t kMaxBracketTasks = 10000;
// The most one batch may take run one task after another at the upper neighbours
// (tasks × 2 × (cpu + wait)): a larger profile would not answer in minutes.
inline constexpr double kMaxBracketSerialSeconds = 20;

// One measured point of the bracket.
struct BracketPoint {
  // "profile", or "<param> x0.5" / "<param> x2" for a neighbour.
  std::string role;
  // The profile's parameters (ParseProfile's names, in the profile's order) at this point.
  std::vector<std::pair<std::string, double>> params;
};

struct BracketPlan {
  v1::Plan plan;
  Profile profile;
  std::vector<BracketPoint> points;   // the profile first, then neighbours per parameter
  std::vector<std::string> io_modes;  // the plan's, "suspending" first when present
  uint32_t tasks = 0;
  std::vector<uint32_t> io_threads;  // the counts used (after the task cap), ascending
};

// The plan for `profile`. InvalidArgument naming the key or flag and its range for a
// profile this plan cannot measure in minutes: a value above its measured range
// (cpu_us <= 10000, wait_us <= 100000, alloc_bytes <= 64 MiB, touch_kib <= 65536), a
// profile giving no parameter, tasks outside 1..kMaxBracketTasks, an io_threads count 0,
// or tasks × 2 × (cpu + wait) at the upper neighbours above kMaxBracketSerialSeconds.
absl::StatusOr<BracketPlan> BuildBracketPlan(const Profile& profile, const BracketOptions& options);

// The largest value of each parameter BuildBracketPlan measures (cpu_ns <= 10e6, ...),
// "for --measure": for ParseProfile, so `recommend --measure` quotes the range that
// applies to it while parsing the profile.
ProfileLimits MeasureProfileLimits();

// "100 tasks per batch; thread counts tried 16, 64, 256; neighbours x0.5 and x2 of each
// given parameter".
std::string AssumedText(const BracketPlan& bracket);

}  // namespace fleetmark::report
