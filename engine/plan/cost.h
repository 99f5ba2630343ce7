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
//   worst     = (2 + k) × (P_max × (W + O) + B)    racing's cap; every process measured
//               + k × P_max × C                    again once as contended and after each
//                                                  of k cooldown_retries of C s
// A case that meets its CI target stops before its budget (faster than expected); a slow
// device does not run longer (the budget bounds it) except by one repetition over a
// process's share, at most max(B, kMaxRepetitionOverrunSeconds) (plan validation's
// bound), which the estimate leaves out. Scenario cases run once, in one child:
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

struct PlanCost {
  int batch_cases = 0;
  int scenario_cases = 0;
  BatchProcesses processes;   // of the batch cases
  double warmup_seconds = 0;  // per process
  double budget_seconds = 0;  // max_seconds_per_case
  absl::Duration expected;    // one device, the model above
  absl::Duration worst;
};

// The cost of measuring `cases` with `resolved` settings (ResolveMeasurement's) under
// `preconditions`, on one device.
PlanCost EstimateCost(const std::vector<v1::CaseSpec>& cases, const v1::MeasurementSettings& resolved,
                      const v1::Preconditions& preconditions);

// The cost of every case of `plan` (ApplyQuick first when `quick`). `plan` must be valid.
PlanCost EstimatePlanCost(const v1::Plan& plan, bool quick);

// "expected 25m00s, worst case 1h05m per device (130 batch cases x 3..10 processes of 0.5 s
// warm-up + a 10 s budget; 0 scenario cases)".
std::string PlanCostText(const PlanCost& cost);

// "worst case 1h05m is above 1h: ..." when cost.worst > kLongPlanDuration, else "".
std::string LongPlanWarning(const PlanCost& cost);

}  // namespace fleetmark::engine
