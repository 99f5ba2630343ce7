// What a plan costs: its expected and worst-case duration on one device, from its
// measurement settings and its matrix, before anything runs (`fleetmark plan validate`
// and `fleetmark submit` print it, docs/cli.md "What a plan costs").
//
// The model. A batch case runs in fresh processes (engine/runner/runner.h): at least
// P_min = max(kMinBatchProcesses, processes, rounds) of them and, when it races other
// strategies on its point (a group of two or more cases with one CasePointKey,
// engine/plan/case_group.h), up to P_max = max(P_min, max_processes) while racing keeps
// its group open. Starting a process (a child process, the strategy, the harness
// calibration, the conditions read around it) costs O; it warms up until warmup_seconds
// (W) have passed, at least one repetition: max(W, R), with R the shortest repetition
// the plan states (MinRepetitionTime, engine/plan/repetition_time.h: synthetic cpu_ns
// over the CPUs the strategy can use, waits over the tasks it can have waiting). Then it
// measures m: its share of the budget B = max_seconds_per_case (B / P_max for a racing
// contender, which the runner plans for its cap; B / P_min otherwise), or less when its
// own samples meet the CI target once it has its share of min_seconds_per_case
// (S_min / P_min) and of min_repetitions (ceil(N / P_min) repetitions), and at least one
// repetition (the expected figure takes the CI target as met there):
//   m        = max(R, min(share, max(S_min / P_min, ceil(N / P_min) x R)))
//   expected = p x (O_quiet + max(W, R) + m), with p = P_min for a case alone on its
//              point and ExpectedContenderProcesses(P_min, min(P_max, max(P_min,
//              ceil(B / m)))) for a contender (racing ends some races at P_min and takes
//              others on, up to the cap or until a contender has spent its budget)
//   worst    = (1 + Q + k) x (P x (O + kMaxCalibrationSeconds + W + 2R) + B)
//              + k x P x C,   P = P_max for a contender, else P_min
// The worst case is an upper bound under the model: every process measured again as
// contended Q = kContentionRetries times (engine/measure/contention.h) and after each of
// k cooldown_retries of C s, starting at the loaded machine's cost, calibrating to its
// cap, warming up W plus the repetition in flight and overrunning its share by one
// repetition (the runner's shares sum to B); it bounds
// repetitions by R as the plan states them (a named workload's own CPU work is not known
// before it runs). Cool-down is spent only on a throttled process, so the expected figure
// spends none. A case whose R is above the bound on one repetition,
// L = max(B, kMaxRepetitionOverrunSeconds) (RepetitionBoundSeconds), is stopped by the
// runner after its first repetition as TIMEOUT, or by its watchdog at
// W + B / P + kWatchdogRepetitions x L, whichever is first: it costs one process, of R
// expected (the watchdog's time if that is shorter) and the watchdog's time worst.
// Scenario cases run once, in one child:
//   memory  expected kExpectedMemoryPointSeconds per point, worst point_timeout_seconds per point
//   fanout  expected one call's min(delay_ms, timeout_ms) (the calls of a request overlap),
//           worst calls_per_request of them one after another
//   load    expected ramp_seconds + hold_seconds, worst that + request_timeout_ms
// Preflight gates (Plan.preconditions) run before every slice (a batch process or a
// scenario case): max_other_cpu_percent samples the CPU for cpu_sample_seconds (S) each
// time (expected S, worst max_checks × S + (max_checks − 1) × the gates' cooldown).
// The model holds for any device: the plan names no device class, and only the budget,
// not the device's speed, bounds the time; the estimate is per device (every agent of a
// fleet run measures the whole plan).
//
// Thread-safe (pure functions).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "fleetmark/v1/plan.pb.h"
#include "fleetmark/v1/result.pb.h"

namespace fleetmark::engine {

// Above this, `plan validate` and `submit` warn about the worst case.
inline constexpr absl::Duration kLongPlanDuration = absl::Hours(1);
// Starting one batch process on a loaded machine (the worst case's O): measured on the
// project's 2-core VM (2026-12-07, load 16): 10 processes of a 1-task case with 0.01 s
// warm-up and a 0.03 s budget took 4.5-4.9 s, each contended one measured twice, i.e.
// ~0.2 s per process.
inline constexpr double kProcessOverheadSeconds = 0.2;
// Starting one batch process on a quiet machine (the expected figure's O_quiet): on the
// 2-core VM, otherwise idle, ten invocations of plans/crossover.txtpb (5 --quick, 5
// default, 2026-12-07 11:28-11:54, load 0.9-8.9 from the runs themselves; 332-514
// processes each) spent 0.061-0.075 s per process beyond their warm-up and timed
// repetitions (0.067-0.117 s in ten at 07:37-08:05, before the contention re-measures
// and cap of issue 31): the child process, the strategy, the harness calibration, the
// conditions read around it and the few contended processes measured again.
inline constexpr double kQuietProcessOverheadSeconds = 0.07;
// Racing after the minimum processes (the expected figure's p for a contender): each
// further round is taken to end a contender's race (decided, equivalent, eliminated, or
// out of budget) with this probability, so a contender runs ExpectedContenderProcesses =
// P_min + sum over j = 1 .. P_max - P_min of (1 - q)^j processes on average (a geometric
// stopping time truncated at the cap). Fitted to the same ten crossover invocations (80
// contenders in 16 groups): they ran 4.15-4.45 processes of 3..6 under --quick and
// 5.20-6.42 of 3..16 by default; q = 0.3 gives 4.53 and 5.31.
inline constexpr double kRacingStopProbability = 0.3;
double ExpectedContenderProcesses(int p_min, int p_max);
// The harness calibration of every batch process (engine/runner/batch_slice.cc, after
// its warm-up): empty-task batches until kCalibrationTasks tasks ran or this long, at
// least kMinCalibrationBatches of them.
inline constexpr int kMinCalibrationBatches = 5;
inline constexpr int64_t kCalibrationTasks = 2000;
inline constexpr double kMaxCalibrationSeconds = 0.1;
// What one memory point is expected to take (start the tasks, read the memory, stop).
inline constexpr double kExpectedMemoryPointSeconds = 1;

// The processes of every batch case (runner.h): min = max(kMinBatchProcesses,
// processes, rounds), max = max(min, max_processes). `resolved`: ResolveMeasurement's.
struct BatchProcesses {
  int min = 0;
  int max = 0;
};
BatchProcesses BatchProcessRange(const v1::MeasurementSettings& resolved);

// The runner's watchdog on one slice (engine/runner/runner.h): warm-up + time quota +
// this many times the bound on one repetition (warm-up's last repetition, the quota's
// last one, and starting and stopping the strategy and the process).
inline constexpr int kWatchdogRepetitions = 3;

// The longest one repetition may take before the runner stops its case:
// max(max_seconds_per_case, kMaxRepetitionOverrunSeconds), the bound plan validation
// guarantees for waits. `resolved`: ResolveMeasurement's.
double RepetitionBoundSeconds(const v1::MeasurementSettings& resolved);

struct PlanCost {
  int batch_cases = 0;
  int scenario_cases = 0;
  int cpus = 0;  // the CPUs the CPU work was spread over (EstimateCost's `cpus`)
  // Batch cases whose shortest repetition is above bound_seconds: stopped after one.
  int overrun_cases = 0;
  double bound_seconds = 0;               // RepetitionBoundSeconds
  double longest_repetition_seconds = 0;  // the largest MinRepetitionTime of the batch cases
  std::string longest_repetition_case;    // its case id
  BatchProcesses processes;               // of the batch cases
  int racing_cases = 0;                   // batch cases with another strategy on their point
  double warmup_seconds = 0;              // per process
  double budget_seconds = 0;              // max_seconds_per_case
  absl::Duration expected;                // one device, the model above
  absl::Duration worst;
};

// The cost of measuring `cases` with `resolved` settings (ResolveMeasurement's) under
// `preconditions`, on one device whose processes may use `cpus` CPUs (>= 1; the CLI
// passes its own machine's, EffectiveCpuCount: a plan names no device).
PlanCost EstimateCost(const std::vector<v1::CaseSpec>& cases, const v1::MeasurementSettings& resolved,
                      const v1::Preconditions& preconditions, int cpus);

// The cost of every case of `plan` (ApplyQuick first when `quick`). `plan` must be valid.
PlanCost EstimatePlanCost(const v1::Plan& plan, bool quick, int cpus);
// The cost of `cases`, some of `plan`'s (after ApplyQuick when `quick`: SelectCases's),
// under `plan`'s settings: what `run` and `submit` measure with --filter.
PlanCost EstimatePlanCost(const v1::Plan& plan, bool quick, const std::vector<v1::CaseSpec>& cases, int cpus);

// What is left of a run the model priced at `cost`, `elapsed` into it, as a range.
// expected: the larger of the model's expected figure minus elapsed and `observed`, the
// run's own extrapolation of its progress so far (nullopt before it has one); worst: the
// larger of the model's worst case minus elapsed and expected. A run's own rate
// extrapolated from its first processes assumes the fewest processes per case, while
// racing takes contenders up to max_processes (so `fleetmark run`'s ETA grew from 46 s
// to 12 min on S1 --quick, priced at 4m48s expected, 51m worst): the model bounds it
// from below until the run has spent the expected figure.
struct RemainingTime {
  absl::Duration expected;
  absl::Duration worst;
};
RemainingTime EstimateRemaining(const PlanCost& cost, absl::Duration elapsed, std::optional<absl::Duration> observed);

// "4m10s, at most 19m" (just "4m10s" when the two round alike): the progress lines'
// ETA.
std::string RemainingText(const RemainingTime& left);

// "expected 25m00s, worst case 1h05m per device (130 batch cases x 3..16 processes of 0.5 s
// warm-up + a 10 s budget; 0 scenario cases)".
std::string PlanCostText(const PlanCost& cost);

// "2 batch cases cannot finish one repetition within max(...) = 1m00s (e.g. CASE: at
// least 1m40s with 2 CPUs): each stops as TIMEOUT after its first repetition; ..." when
// cost.overrun_cases > 0, else "".
std::string RepetitionOverrunWarning(const PlanCost& cost);

// "worst case 1h05m is above 1h: ..." when cost.worst > kLongPlanDuration, else "".
std::string LongPlanWarning(const PlanCost& cost);

}  // namespace fleetmark::engine
