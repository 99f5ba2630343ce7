// EstimateCost: a plan's expected and worst-case duration (cost.h).
#include "engine/plan/cost.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/common/duration_text.h"
#include "engine/measure/contention.h"
#include "engine/measure/stop_rule.h"
#include "engine/plan/case_group.h"
#include "engine/plan/plan.h"
#include "engine/plan/repetition_time.h"
#include "engine/scenarios/param_rules.h"
#include "engine/scenarios/registry.h"

namespace fleetmark::engine {
namespace {

// The memory scenario's points when task_counts is empty (engine/scenarios/params.h).
constexpr int kDefaultMemoryPoints = 5;

struct CaseCost {
  double expected = 0;  // seconds
  double worst = 0;
  int slices = 0;  // preflight checks: one per batch process, one per scenario case
  int worst_slices = 0;
};

CaseCost ScenarioCost(const v1::CaseSpec& spec) {
  CaseCost cost;
  cost.slices = cost.worst_slices = 1;
  if (spec.has_memory()) {
    const int points = spec.memory().task_counts_size() > 0 ? spec.memory().task_counts_size() : kDefaultMemoryPoints;
    const uint32_t timeout = spec.memory().point_timeout_seconds() != 0 ? spec.memory().point_timeout_seconds()
                                                                        : kDefaultPointTimeoutSeconds;
    cost.expected = points * kExpectedMemoryPointSeconds;
    cost.worst = static_cast<double>(points) * timeout;
  } else if (spec.has_fanout()) {
    const v1::FanoutParams& f = spec.fanout();
    const double call = std::min(RuleValue(kFanoutDelay, f), RuleValue(kFanoutTimeout, f)) / 1e3;
    cost.expected = call;
    cost.worst = call * RuleValue(kFanoutCalls, f);
  } else if (spec.has_load()) {
    const v1::LoadParams& l = spec.load();
    cost.expected = static_cast<double>(RuleValue(kLoadRamp, l)) + RuleValue(kLoadHold, l);
    cost.worst = cost.expected + RuleValue(kLoadRequestTimeout, l) / 1e3;
  }
  return cost;
}

}  // namespace

BatchProcesses BatchProcessRange(const v1::MeasurementSettings& resolved) {
  BatchProcesses p;
  p.min = static_cast<int>(std::max({kMinBatchProcesses, resolved.processes(), resolved.rounds()}));
  p.max = std::max(p.min, static_cast<int>(resolved.max_processes()));
  return p;
}

double ExpectedContenderProcesses(int p_min, int p_max) {
  double processes = p_min, on = 1;
  for (int j = p_min; j < p_max; ++j) {
    on *= 1 - kRacingStopProbability;  // still racing in round j + 1
    processes += on;
  }
  return processes;
}

PlanCost EstimateCost(const std::vector<v1::CaseSpec>& cases, const v1::MeasurementSettings& resolved,
                      const v1::Preconditions& preconditions, int cpus) {
  PlanCost out;
  out.cpus = cpus;
  out.processes = BatchProcessRange(resolved);
  out.warmup_seconds = resolved.warmup_seconds();
  out.budget_seconds = resolved.max_seconds_per_case();
  out.bound_seconds = RepetitionBoundSeconds(resolved);
  const double w = resolved.warmup_seconds(), b = resolved.max_seconds_per_case();
  const double s_min = resolved.min_seconds_per_case();
  const double k = resolved.cooldown_retries(), c = resolved.cooldown_seconds();
  const double bound = RepetitionBoundSeconds(resolved);
  const int p_min = out.processes.min, p_max = out.processes.max;
  // The repetitions a process takes before its CI target may stop it (the runner's
  // min_samples): min_repetitions over the minimum processes, rounded up.
  const double min_samples = std::ceil(static_cast<double>(resolved.min_repetitions()) / p_min);
  // The batch cases on each point: two or more race (the runner's groups).
  std::map<std::string, int> on_point;
  for (const v1::CaseSpec& spec : cases) {
    if (IsBatch(spec)) ++on_point[CasePointKey(spec)];
  }
  double expected = 0, worst = 0, slices = 0, worst_slices = 0;
  for (const v1::CaseSpec& spec : cases) {
    if (IsBatch(spec)) {
      ++out.batch_cases;
      const double r = absl::ToDoubleSeconds(MinRepetitionTime(spec, cpus));
      if (r > out.longest_repetition_seconds) {
        out.longest_repetition_seconds = r;
        out.longest_repetition_case = spec.case_id();
      }
      const bool racing = on_point[CasePointKey(spec)] >= 2;
      if (racing) ++out.racing_cases;
      const int planned = racing ? p_max : p_min;  // the runner's plan for its shares
      if (r > bound) {
        // The runner stops the case after its first repetition, which takes at least R,
        // or its watchdog ends the slice (warm-up + its share + kWatchdogRepetitions x L).
        ++out.overrun_cases;
        const double watchdog = w + b / planned + kWatchdogRepetitions * bound;
        expected += kQuietProcessOverheadSeconds + std::min(r, watchdog);
        worst += kProcessOverheadSeconds + watchdog;
        slices += 1;
        worst_slices += 1;
        continue;
      }
      const double measured = std::max(r, std::min(b / planned, std::max(s_min / p_min, min_samples * r)));
      // A race also ends when a contender has spent its budget: at most B / m processes.
      const int budget_cap =
          measured > 0 ? static_cast<int>(std::clamp(std::ceil(b / measured - 1e-9), double{p_min}, double{p_max}))
                       : p_max;
      const double processes = racing ? ExpectedContenderProcesses(p_min, budget_cap) : p_min;
      expected += processes * (kQuietProcessOverheadSeconds + std::max(w, r) + measured);
      // Each process measured once, again up to kContentionRetries times while contended
      // and after each of k cool-downs (engine/runner/runner.h).
      worst += (1 + kContentionRetries + k) *
                   (planned * (kProcessOverheadSeconds + kMaxCalibrationSeconds + w + 2 * r) + b) +
               k * planned * c;
      slices += processes;
      worst_slices += planned;
    } else {
      ++out.scenario_cases;
      const CaseCost cost = ScenarioCost(spec);
      expected += cost.expected;
      worst += cost.worst;
      slices += cost.slices;
      worst_slices += cost.worst_slices;
    }
  }
  if (HasGates(preconditions)) {
    const double sample = preconditions.has_max_other_cpu_percent()
                              ? (preconditions.has_cpu_sample_seconds() ? preconditions.cpu_sample_seconds()
                                                                        : kDefaultGateCpuSampleSeconds)
                              : 0;
    const double checks = preconditions.has_max_checks() ? preconditions.max_checks() : kDefaultGateChecks;
    const double cooldown =
        preconditions.has_cooldown_seconds() ? preconditions.cooldown_seconds() : kDefaultGateCooldownSeconds;
    expected += slices * sample;
    worst += worst_slices * (checks * sample + (checks - 1) * cooldown);
  }
  out.expected = absl::Seconds(expected);
  out.worst = absl::Seconds(worst);
  return out;
}

PlanCost EstimatePlanCost(const v1::Plan& plan, bool quick, int cpus) {
  return EstimatePlanCost(plan, quick, ExpandCases(plan, quick), cpus);
}

PlanCost EstimatePlanCost(const v1::Plan& plan, bool quick, const std::vector<v1::CaseSpec>& cases, int cpus) {
  const v1::Plan effective = quick ? ApplyQuick(plan) : plan;
  return EstimateCost(cases, ResolveMeasurement(effective.measurement()), plan.preconditions(), cpus);
}

RemainingTime EstimateRemaining(const PlanCost& cost, absl::Duration elapsed, std::optional<absl::Duration> observed) {
  RemainingTime left;
  left.expected = std::max(cost.expected - elapsed, absl::ZeroDuration());
  if (observed) left.expected = std::max(left.expected, *observed);
  left.worst = std::max(cost.worst - elapsed, left.expected);
  return left;
}

std::string RemainingText(const RemainingTime& left) {
  const std::string expected = RoundedDuration(left.expected);
  const std::string worst = RoundedDuration(left.worst);
  return expected == worst ? expected : absl::StrCat(expected, ", at most ", worst);
}

std::string PlanCostText(const PlanCost& cost) {
  std::string text = absl::StrCat("expected ", RoundedDuration(cost.expected), ", worst case ",
                                  RoundedDuration(cost.worst), " per device (");
  if (cost.batch_cases > 0) {
    absl::StrAppend(&text, cost.batch_cases, " batch case", cost.batch_cases == 1 ? "" : "s", " x ",
                    cost.processes.min);
    if (cost.processes.max != cost.processes.min) absl::StrAppend(&text, "..", cost.processes.max);
    absl::StrAppend(&text, " processes of ", cost.warmup_seconds, " s warm-up + a ", cost.budget_seconds,
                    " s budget per case");
  }
  if (cost.scenario_cases > 0) {
    absl::StrAppend(&text, cost.batch_cases > 0 ? "; " : "", cost.scenario_cases, " scenario case",
                    cost.scenario_cases == 1 ? "" : "s");
  }
  return absl::StrCat(text, ")");
}

double RepetitionBoundSeconds(const v1::MeasurementSettings& resolved) {
  return std::max(resolved.max_seconds_per_case(), kMaxRepetitionOverrunSeconds);
}

std::string RepetitionOverrunWarning(const PlanCost& cost) {
  if (cost.overrun_cases == 0) return "";
  return absl::StrCat(cost.overrun_cases, " batch case", cost.overrun_cases == 1 ? "" : "s",
                      " cannot finish one repetition within max(measurement.max_seconds_per_case, ",
                      kMaxRepetitionOverrunSeconds, " s) = ", RoundedDuration(absl::Seconds(cost.bound_seconds)),
                      " (e.g. ", cost.longest_repetition_case, ": at least ",
                      RoundedDuration(absl::Seconds(cost.longest_repetition_seconds)), " with ", cost.cpus,
                      " CPUs): each stops as TIMEOUT after its first repetition; use fewer tasks or less work per "
                      "task, or raise max_seconds_per_case");
}

std::string LongPlanWarning(const PlanCost& cost) {
  if (cost.worst <= kLongPlanDuration) return "";
  return absl::StrCat("worst case ", RoundedDuration(cost.worst), " (expected ", RoundedDuration(cost.expected),
                      ") is above ", RoundedDuration(kLongPlanDuration),
                      " on each device; lower measurement.max_seconds_per_case, rounds or max_processes, or "
                      "measure fewer cases");
}

}  // namespace fleetmark::engine
