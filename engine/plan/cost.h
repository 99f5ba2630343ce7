// What a plan costs: its expected and worst-case duration on one device, from its
// measurement settings and its matrix, before anything runs (`fleetmark plan validate`
// and `fleetmark submit` print it, docs/cli.md "What a plan costs").
//
// The model. A batch case runs in fresh processes (engine/runner/runner.h): at least
// P_min = max(kMinBatchProcesses, processes, rounds) of them and, while racing keeps
// its group open, up to P_max = max(P_min, max_processes). Each process warms up for
// warmup_seconds (W) and measures its share of the case's time budget,
// max_seconds_per_case (B) over all its processes; starting each one (a child process,
// the harness calibration, the strategy, the conditions read around it) costs about
// O = kProcessOverheadSeconds. So:
//   expected  = P_min × (W + O) + B                the minimum processes spend the budget
//   worst     = (1 + N + k) × (P_max × (W + O) + B)  racing's cap; every process measured
//               + k × P_max × C                    again N = kContentionRetries times as
//                                                  contended (contention.h) and after each
//                                                  of k cooldown_retries of C s
// A case that meets its CI target stops before its budget (faster than expected).
// One repetition cannot be interrupted, so every process runs at least two (one warm-up,
// one measured) whatever its share of the budget: with R the shortest repetition the
// plan states (MinRepetitionTime, engine/plan/repetition_time.h: synthetic cpu_ns over
// the CPUs the strategy can use, waits over the tasks it can have waiting), a process
// warms up for max(W, R) (worst W + R) and the processes measure max(B, P × R) in all
// (worst B + P × R); with R = 0 the formulas above. A case whose R is above the bound on
// one repetition, L = max(B, kMaxRepetitionOverrunSeconds) (RepetitionBoundSeconds), is
// stopped by the runner after its first repetition as TIMEOUT (or by its watchdog at
// W + B / P_min + kWatchdogRepetitions × L, whichever is first): it costs that once.
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

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "fleetmark/v1/plan.pb.h"
#include "fleetmark/v1/result.pb.h"

namespace fleetmark::engine {

// Above this, `plan validate` and `submit` warn about the worst case.
inline constexpr absl::Duration kLongPlanDuration = absl::Hours(1);
// Starting one batch process: measured on the project's 2-core VM (2026-12-07, load
// 16): 10 processes of a 1-task case with 0.01 s warm-up and a 0.03 s budget took
// 4.5-4.9 s, each contended one measured twice, i.e. ~0.2 s per process.
inline constexpr double kProcessOverheadSeconds = 0.2;
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

// "expected 25m00s, worst case 1h05m per device (130 batch cases x 3..10 processes of 0.5 s
// warm-up + a 10 s budget; 0 scenario cases)".
std::string PlanCostText(const PlanCost& cost);

// "2 batch cases cannot finish one repetition within max(...) = 1m00s (e.g. CASE: at
// least 1m40s with 2 CPUs): each stops as TIMEOUT after its first repetition; ..." when
// cost.overrun_cases > 0, else "".
std::string RepetitionOverrunWarning(const PlanCost& cost);

// "worst case 1h05m is above 1h: ..." when cost.worst > kLongPlanDuration, else "".
std::string LongPlanWarning(const PlanCost& cost);

}  // namespace fleetmark::engine
