// EstimateCost (engine/plan/cost.h): known-answer arithmetic of a plan's expected and
// worst-case duration, and the long-plan warning.
#include "engine/plan/cost.h"

#include <cmath>
#include <map>
#include <string>

#include "engine/measure/contention.h"
#include "engine/plan/plan.h"
#include "engine/plan/repetition_time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetmark::engine {
namespace {

using ::testing::HasSubstr;

// Seconds of `d` (the model's sums are doubles: compared with a tolerance).
double Secs(absl::Duration d) { return absl::ToDoubleSeconds(d); }
constexpr double kTol = 1e-6;
constexpr double O = kProcessOverheadSeconds;        // starting a process, worst (loaded)
constexpr double Oq = kQuietProcessOverheadSeconds;  // starting a process, expected (quiet)
constexpr double CAL = kMaxCalibrationSeconds;       // the harness calibration's cap
constexpr double MEASURED = 1 + kContentionRetries;  // times a process may be measured without cool-down

v1::Plan PlanOf(const std::string& text) {
  absl::StatusOr<ParsedPlan> parsed = ParsePlan(text, PlanFormat::kText, "p.txtpb");
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(ValidatePlan(*parsed).ok()) << ValidatePlan(*parsed);
  return parsed.ok() ? parsed->plan : v1::Plan();
}

TEST(PlanCost, ContendersRaceTowardsTheCapAndMeasureTheirShareUntilTheirCiTargetCanStopThem) {
  // 2 strategies x 2 workloads = 4 batch cases, two contenders on each workload's point;
  // rounds 4 -> 4..8 processes. Named workloads state no CPU work: R = 0.
  const v1::Plan plan =
      PlanOf(R"pb(name: "p"
                  matrix {
                    strategies { name: "direct" }
                    strategies { name: "single_thread" }
                    workloads: [ "arithmetic", "collections" ]
                    batch { tasks: 10 }
                  }
                  measurement { warmup_seconds: 0.5 max_seconds_per_case: 10 rounds: 4 max_processes: 8 })pb");
  const PlanCost cost = EstimatePlanCost(plan, false, 2);
  EXPECT_EQ(cost.batch_cases, 4);
  EXPECT_EQ(cost.racing_cases, 4);
  EXPECT_EQ(cost.scenario_cases, 0);
  EXPECT_EQ(cost.processes.min, 4);
  EXPECT_EQ(cost.processes.max, 8);
  // A contender's share is 10 s / 8 processes; its CI target may stop it after its share
  // of the default min_seconds_per_case, 0.5 s / 4 = 0.125 s, which is shorter.
  // Racing: 4 processes, then each further round with probability 0.7 of going on.
  const double processes = 4 + 0.7 + 0.49 + 0.343 + 0.2401;
  EXPECT_NEAR(Secs(cost.expected), 4 * processes * (Oq + 0.5 + 0.125), kTol);
  // A contended process is measured again up to kContentionRetries times; each of the
  // cap's 8 processes starts at the loaded cost and calibrates to the cap.
  EXPECT_NEAR(Secs(cost.worst), 4 * MEASURED * (8 * (0.5 + O + CAL) + 10), kTol);
  ASSERT_EQ(Oq, 0.07);
  ASSERT_EQ(O, 0.2);
  ASSERT_EQ(kRacingStopProbability, 0.3);
  EXPECT_EQ(PlanCostText(cost),
            "expected 16s, worst case 4m22s per device (4 batch cases x 4..8 processes of 0.5 s warm-up + a 10 s "
            "budget per case)");
  EXPECT_EQ(LongPlanWarning(cost), "");
}

TEST(PlanCost, ACaseAloneOnItsPointRunsTheMinimumProcessesOverItsWholeBudget) {
  // One strategy: no contender, so P_min processes, each with B / P_min of the budget.
  const v1::Plan plan =
      PlanOf(R"pb(name: "p"
                  matrix {
                    strategies { name: "direct" }
                    workloads: [ "arithmetic" ]
                    batch { tasks: 10 }
                  }
                  measurement { warmup_seconds: 0.5 max_seconds_per_case: 3 min_seconds_per_case: 3 })pb");
  const PlanCost cost = EstimatePlanCost(plan, false, 2);
  EXPECT_EQ(cost.racing_cases, 0);
  EXPECT_EQ(cost.processes.min, 3);
  EXPECT_EQ(cost.processes.max, 16);
  // min_seconds_per_case = the budget: each of the 3 processes measures its 1 s share.
  EXPECT_NEAR(Secs(cost.expected), 3 * (Oq + 0.5 + 1), kTol);
  // Never raced to the cap: its 3 processes, each measured up to 1 + kContentionRetries times.
  EXPECT_NEAR(Secs(cost.worst), MEASURED * (3 * (0.5 + O + CAL) + 3), kTol);
  // --quick's cap changes nothing for it; a shorter min_seconds_per_case lets it stop
  // after 0.5 s / 3 per process.
  v1::Plan early = plan;
  early.mutable_measurement()->set_min_seconds_per_case(0.5);
  EXPECT_NEAR(Secs(EstimatePlanCost(early, false, 2).expected), 3 * (Oq + 0.5 + 0.5 / 3), kTol);
}

TEST(PlanCost, DefaultsGiveThreeToSixteenProcessesAndCooldownRetriesMultiplyTheWorstCase) {
  const v1::Plan plan = PlanOf(R"pb(name: "p"
                                    matrix {
                                      strategies { name: "direct" }
                                      strategies { name: "single_thread" }
                                      workloads: [ "arithmetic" ]
                                      batch { tasks: 10 }
                                    }
                                    measurement { cooldown_retries: 2 cooldown_seconds: 5 })pb");
  const PlanCost cost = EstimatePlanCost(plan, false, 2);
  EXPECT_EQ(cost.processes.min, 3);   // kMinBatchProcesses
  EXPECT_EQ(cost.processes.max, 16);  // kDefaultMaxProcesses
  // Two contenders: ExpectedContenderProcesses(3, 16) processes of 0.5 s warm-up and
  // min(10 s / 16, 0.5 s / 3) measured; no cool-down expected (only a throttled process
  // cools down).
  EXPECT_NEAR(Secs(cost.expected), 2 * ExpectedContenderProcesses(3, 16) * (Oq + 0.5 + 0.5 / 3), kTol);
  // (1 + 3 + 2) x (16 x (0.5 + O + CAL) + 10) + 2 x 16 x 5 cool-down seconds, per contender.
  EXPECT_NEAR(Secs(cost.worst), 2 * ((MEASURED + 2) * (16 * (0.5 + O + CAL) + 10) + 160), kTol);
  // --quick: racing's cap becomes kQuickMaxProcesses (6), the quick settings' budget.
  v1::Plan quick = plan;
  quick.mutable_quick()->set_max_seconds_per_case(0.6);
  quick.mutable_quick()->set_warmup_seconds(0.25);
  quick.mutable_quick()->set_cooldown_retries(1);
  const PlanCost q = EstimatePlanCost(quick, true, 2);
  EXPECT_EQ(q.processes.max, 6);
  // A contender's share, 0.6 s / 6, runs out before its CI stop at 0.5 s / 3.
  EXPECT_NEAR(Secs(q.expected), 2 * (3 + 0.7 + 0.49 + 0.343) * (Oq + 0.25 + 0.1), kTol);
  EXPECT_NEAR(Secs(q.worst), 2 * ((MEASURED + 1) * (6 * (0.25 + O + CAL) + 0.6) + 1 * 6 * 5.0), kTol);
}

TEST(PlanCost, ScenarioCasesRunOnceAndAreBoundedByTheirTimeouts) {
  const v1::Plan plan = PlanOf(R"pb(name: "p"
                                    matrix {
                                      strategies { name: "thread_per_task" }
                                      memory {
                                        task_counts: [ 1, 10, 100 ]
                                        point_timeout_seconds: 30
                                      }
                                    }
                                    matrix {
                                      strategies { name: "thread_per_task" }
                                      fanout { requests: 2 calls_per_request: 4 delay_ms: 200 timeout_ms: 100 }
                                    }
                                    matrix {
                                      strategies { name: "fixed_pool" threads: 4 }
                                      load { ramp_seconds: 2 hold_seconds: 3 request_timeout_ms: 1500 }
                                    })pb");
  const PlanCost cost = EstimatePlanCost(plan, false, 2);
  EXPECT_EQ(cost.batch_cases, 0);
  EXPECT_EQ(cost.scenario_cases, 3);
  // memory 3 points x 1 s; fanout one call min(200, 100) ms; load 2 + 3 s.
  EXPECT_NEAR(Secs(cost.expected), 3 + 0.1 + 5, kTol);
  // memory 3 x 30 s; fanout 4 calls x 0.1 s; load 5 + 1.5 s.
  EXPECT_NEAR(Secs(cost.worst), 90 + 0.4 + 6.5, kTol);
  EXPECT_THAT(PlanCostText(cost), HasSubstr("(3 scenario cases)"));
}

TEST(PlanCost, PreflightGatesAddTheirCpuSampleAndWorstCaseRechecksPerSlice) {
  const v1::Plan plan = PlanOf(
      R"pb(name: "p"
           matrix {
             strategies { name: "direct" }
             workloads: [ "arithmetic" ]
             batch { tasks: 10 }
           }
           measurement { warmup_seconds: 1 max_seconds_per_case: 2 max_processes: 3 }
           preconditions { max_other_cpu_percent: 10 cpu_sample_seconds: 0.5 max_checks: 2 cooldown_seconds: 4 })pb");
  const PlanCost cost = EstimatePlanCost(plan, false, 2);
  // 3 processes of 1 s warm-up and min(2 s / 3, 0.5 s / 3) measured, plus 3 slices x
  // 0.5 s sample.
  EXPECT_NEAR(Secs(cost.expected), 3 * (Oq + 1 + 0.5 / 3) + 1.5, kTol);
  // Measured up to 4 times; each slice: 2 checks x 0.5 s + 1 cooldown x 4 s = 5 s.
  EXPECT_NEAR(Secs(cost.worst), MEASURED * (3 * (1 + O + CAL) + 2) + 3 * 5, kTol);
}

// The issue's plan (34, item 4): thread_per_task with 1 000 000 tasks, 86 400 s per case
// and 1 000 rounds was accepted without a word.
TEST(PlanCost, AHugePlanIsWarnedAbout) {
  const v1::Plan plan = PlanOf(R"pb(name: "huge"
                                    matrix {
                                      strategies { name: "thread_per_task" }
                                      workloads: [ "arithmetic" ]
                                      batch { tasks: 1000000 }
                                    }
                                    measurement { max_seconds_per_case: 86400 rounds: 1000 })pb");
  const PlanCost cost = EstimatePlanCost(plan, false, 2);
  EXPECT_EQ(cost.processes.min, 1000);  // rounds; racing's cap of 16 is raised to it
  // Expected: each process may stop on its CI target after 0.5 s / 1000 of measuring; the
  // worst case spends the whole budget, each process measured up to 4 times.
  EXPECT_NEAR(Secs(cost.expected), 1000 * (Oq + 0.5 + 0.5 / 1000), kTol);
  EXPECT_NEAR(Secs(cost.worst), MEASURED * (1000 * (0.5 + O + CAL) + 86400), kTol);
  EXPECT_EQ(LongPlanWarning(cost),
            "worst case 96h53m (expected 9m31s) is above 1h00m on each device; lower "
            "measurement.max_seconds_per_case, rounds or max_processes, or measure fewer cases");
}

// Issue 34's trial (D1): direct, synthetic cpu_ns 1 ms x 100 000 tasks said "expected
// 3s" while one repetition takes 100 s. Above the 60 s bound on one repetition the
// runner stops such a case after its first repetition: it costs that once, and is
// warned about.
TEST(PlanCost, ARepetitionAboveTheBoundCostsItsRepetitionOnceAndIsWarnedAbout) {
  const v1::Plan plan = PlanOf(R"pb(name: "p"
                                    matrix {
                                      strategies { name: "direct" }
                                      workloads: [ "synthetic" ]
                                      synthetic { cpu_ns: 1000000 }
                                      batch { tasks: 100000 }
                                    })pb");
  const PlanCost cost = EstimatePlanCost(plan, false, 2);
  EXPECT_EQ(cost.overrun_cases, 1);
  EXPECT_NEAR(cost.longest_repetition_seconds, 100, kTol);  // direct: one task after another
  EXPECT_NEAR(Secs(cost.expected), Oq + 100, kTol);
  // Worst: its watchdog, warm-up + its share + 3 x the 60 s bound.
  EXPECT_NEAR(Secs(cost.worst), O + 0.5 + 10.0 / 3 + 3 * 60, kTol);
  EXPECT_EQ(RepetitionOverrunWarning(cost),
            "1 batch case cannot finish one repetition within max(measurement.max_seconds_per_case, 60 s) = 1m00s "
            "(e.g. batch/synthetic[cpu_ns=1000000]/blocking/direct/any: at least 1m40s with 2 CPUs): each stops as "
            "TIMEOUT after its first repetition; use fewer tasks or less work per task, or raise "
            "max_seconds_per_case");
  // A repetition the bound allows: every process runs one warm-up and one measured
  // repetition at least, so 3 x (Oq + 5 s + 5 s).
  v1::Plan within = plan;
  within.mutable_matrix(0)->mutable_batch()->set_tasks(5000);
  const PlanCost slow = EstimatePlanCost(within, false, 2);
  EXPECT_EQ(slow.overrun_cases, 0);
  EXPECT_EQ(RepetitionOverrunWarning(slow), "");
  EXPECT_NEAR(Secs(slow.expected), 3 * (Oq + 5 + 5), kTol);
  // Worst: its 3 processes (no contender), each warming up W + R and measuring its share
  // + R, up to 4 times.
  EXPECT_NEAR(Secs(slow.worst), MEASURED * (3 * (O + CAL + 0.5 + 5 + 5) + 10), kTol);
}

// CPU work spreads over min(CPUs, the strategy's threads); a thread holds a task for
// its CPU part and its blocking wait, so 1-thread strategies serialize both.
TEST(PlanCost, TheShortestRepetitionSpreadsCpuWorkOverTheCpusAStrategyCanUse) {
  const v1::Plan plan = PlanOf(R"pb(name: "p"
                                    matrix {
                                      strategies { name: "fixed_pool" threads: 4 label: "four" }
                                      strategies { name: "fixed_pool" threads: 1 label: "one" }
                                      strategies { name: "thread_per_task" }
                                      strategies { name: "single_thread" }
                                      workloads: [ "synthetic" ]
                                      synthetic { cpu_ns: 1000000 wait_us: 1000 }
                                      batch { tasks: 4000 }
                                    })pb");
  std::map<std::string, double> seconds;
  for (const v1::CaseSpec& spec : ExpandCases(plan, false)) {
    seconds[spec.strategy().label().empty() ? spec.strategy().name() : spec.strategy().label()] =
        Secs(MinRepetitionTime(spec, 2));
  }
  EXPECT_NEAR(seconds["four"], 2, kTol);             // 4 s of CPU over 2 CPUs (waits: 4 s / 4 threads)
  EXPECT_NEAR(seconds["one"], 8, kTol);              // 1 thread: 4 s of CPU + 4 s of waits
  EXPECT_NEAR(seconds["thread_per_task"], 2, kTol);  // every task waits at once; CPU over 2 CPUs
  EXPECT_NEAR(seconds["single_thread"], 8, kTol);    // 4 s of CPU + 4 s of waits, one after another
}

// A contender's expected processes: the minimum, then each further round taken with
// probability 1 - kRacingStopProbability = 0.7 of the one before, up to the cap.
TEST(PlanCost, AContenderIsExpectedToRaceGeometricallyTowardsTheCap) {
  EXPECT_NEAR(ExpectedContenderProcesses(3, 3), 3, kTol);
  EXPECT_NEAR(ExpectedContenderProcesses(3, 6), 3 + 0.7 + 0.49 + 0.343, kTol);  // --quick's 3..6
  // 3..16 (the default): 3 + 0.7 (1 - 0.7^13) / 0.3, below the sum's limit 3 + 7/3.
  EXPECT_NEAR(ExpectedContenderProcesses(3, 16), 3 + 0.7 * (1 - std::pow(0.7, 13)) / 0.3, kTol);
  EXPECT_LT(ExpectedContenderProcesses(3, 1000), 3 + 0.7 / 0.3 + kTol);
}

TEST(PlanCost, TheRunnersProcessRangeIsTheMaximumOfItsSettings) {
  v1::MeasurementSettings s;
  s.set_processes(5);
  s.set_rounds(2);
  s.set_max_processes(4);  // raised to the minimum
  const BatchProcesses p = BatchProcessRange(s);
  EXPECT_EQ(p.min, 5);
  EXPECT_EQ(p.max, 5);
}

// Issue 34's second trial: `fleetmark run`'s ETA on S1 --quick went from 46 s to 12 min
// (the runner's rate assumes the fewest processes per case). The remaining time is the
// model's range, raised by the run's own rate when the run is slower than expected.
TEST(PlanCost, TheRemainingTimeIsTheModelsRangeRaisedByTheRunsOwnRate) {
  PlanCost cost;
  cost.expected = absl::Seconds(288);  // S1 --quick: 4m48s
  cost.worst = absl::Seconds(3085);    // 51m25s
  // At the start: the model's figures, not a rate.
  RemainingTime left = EstimateRemaining(cost, absl::ZeroDuration(), std::nullopt);
  EXPECT_EQ(left.expected, absl::Seconds(288));
  EXPECT_EQ(left.worst, absl::Seconds(3085));
  EXPECT_EQ(RemainingText(left), "4m48s, at most 51m25s");
  // 10 s in, the rate says 46 s: too low, the model's 4m38s stands.
  left = EstimateRemaining(cost, absl::Seconds(10), absl::Seconds(46));
  EXPECT_EQ(left.expected, absl::Seconds(278));
  EXPECT_EQ(left.worst, absl::Seconds(3075));
  // Slower than expected: the rate raises the expected figure, and the worst case is
  // never below it.
  left = EstimateRemaining(cost, absl::Seconds(400), absl::Seconds(300));
  EXPECT_EQ(left.expected, absl::Seconds(300));
  EXPECT_EQ(left.worst, absl::Seconds(2685));
  left = EstimateRemaining(cost, absl::Seconds(4000), absl::Seconds(120));
  EXPECT_EQ(left.expected, absl::Seconds(120));
  EXPECT_EQ(left.worst, absl::Seconds(120));
  EXPECT_EQ(RemainingText(left), "2m00s");
  // Past both figures with no rate: nothing is promised beyond 0.
  left = EstimateRemaining(cost, absl::Seconds(4000), std::nullopt);
  EXPECT_EQ(left.expected, absl::ZeroDuration());
  EXPECT_EQ(left.worst, absl::ZeroDuration());
}

}  // namespace
}  // namespace fleetmark::engine
