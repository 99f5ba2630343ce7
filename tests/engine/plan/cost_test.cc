// EstimateCost (engine/plan/cost.h): known-answer arithmetic of a plan's expected and
// worst-case duration, and the long-plan warning.
#include "engine/plan/cost.h"

#include <map>
#include <string>

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
constexpr double O = kProcessOverheadSeconds;

v1::Plan PlanOf(const std::string& text) {
  absl::StatusOr<ParsedPlan> parsed = ParsePlan(text, PlanFormat::kText, "p.txtpb");
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(ValidatePlan(*parsed).ok()) << ValidatePlan(*parsed);
  return parsed.ok() ? parsed->plan : v1::Plan();
}

TEST(PlanCost, BatchCasesSpendMinimumProcessesWarmUpPlusBudgetExpectedAndRacingCapWorst) {
  // 2 strategies x 2 workloads = 4 batch cases; rounds 4 -> 4..8 processes.
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
  EXPECT_EQ(cost.scenario_cases, 0);
  EXPECT_EQ(cost.processes.min, 4);
  EXPECT_EQ(cost.processes.max, 8);
  EXPECT_NEAR(Secs(cost.expected), 4 * (4 * (0.5 + O) + 10), kTol);  // 51.2 s with O = 0.2
  // Four times: a contended process is measured again up to kContentionRetries (3) times.
  EXPECT_NEAR(Secs(cost.worst), 4 * 4 * (8 * (0.5 + O) + 10), kTol);  // 249.6 s
  ASSERT_EQ(O, 0.2);
  EXPECT_EQ(PlanCostText(cost),
            "expected 51s, worst case 4m10s per device (4 batch cases x 4..8 processes of 0.5 s warm-up + a 10 s "
            "budget per case)");
  EXPECT_EQ(LongPlanWarning(cost), "");
}

TEST(PlanCost, DefaultsGiveThreeToSixteenProcessesAndCooldownRetriesMultiplyTheWorstCase) {
  const v1::Plan plan = PlanOf(R"pb(name: "p"
                                    matrix {
                                      strategies { name: "direct" }
                                      workloads: [ "arithmetic" ]
                                      batch { tasks: 10 }
                                    }
                                    measurement { cooldown_retries: 2 cooldown_seconds: 5 })pb");
  const PlanCost cost = EstimatePlanCost(plan, false, 2);
  EXPECT_EQ(cost.processes.min, 3);   // kMinBatchProcesses
  EXPECT_EQ(cost.processes.max, 16);  // kDefaultMaxProcesses
  EXPECT_NEAR(Secs(cost.expected), 3 * (0.5 + O) + 10, kTol);
  // (1 + 3 contention re-measures + 2 cool-downs) x (16 x (0.5 + O) + 10) + 2 x 16 x 5
  // cool-down seconds.
  EXPECT_NEAR(Secs(cost.worst), 6 * (16 * (0.5 + O) + 10) + 160, kTol);
  // --quick: racing's cap becomes kQuickMaxProcesses (6), the quick settings' budget.
  v1::Plan quick = plan;
  quick.mutable_quick()->set_max_seconds_per_case(1);
  quick.mutable_quick()->set_warmup_seconds(0.25);
  quick.mutable_quick()->set_cooldown_retries(1);
  const PlanCost q = EstimatePlanCost(quick, true, 2);
  EXPECT_EQ(q.processes.max, 6);
  EXPECT_NEAR(Secs(q.expected), 3 * (0.25 + O) + 1, kTol);
  EXPECT_NEAR(Secs(q.worst), 5 * (6 * (0.25 + O) + 1) + 1 * 6 * 5.0, kTol);
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
  // 3 processes: 3 x (1 + O) + 2 s, plus 3 slices x 0.5 s sample.
  EXPECT_NEAR(Secs(cost.expected), 3 * (1 + O) + 2 + 1.5, kTol);
  // Measured four times; each slice: 2 checks x 0.5 s + 1 cooldown x 4 s = 5 s.
  EXPECT_NEAR(Secs(cost.worst), 4 * (3 * (1 + O) + 2) + 3 * 5, kTol);
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
  EXPECT_EQ(cost.processes.min, 1000);                               // rounds; racing's cap of 16 is raised to it
  EXPECT_NEAR(Secs(cost.expected), 1000 * (0.5 + O) + 86400, kTol);  // 87 100 s = 24h12m
  EXPECT_NEAR(Secs(cost.worst), 4 * (1000 * (0.5 + O) + 86400), kTol);
  EXPECT_EQ(LongPlanWarning(cost),
            "worst case 96h47m (expected 24h12m) is above 1h00m on each device; lower "
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
  EXPECT_NEAR(Secs(cost.expected), 100 + O, kTol);
  EXPECT_NEAR(Secs(cost.worst), 100 + O, kTol);
  EXPECT_EQ(RepetitionOverrunWarning(cost),
            "1 batch case cannot finish one repetition within max(measurement.max_seconds_per_case, 60 s) = 1m00s "
            "(e.g. batch/synthetic[cpu_ns=1000000]/blocking/direct/any: at least 1m40s with 2 CPUs): each stops as "
            "TIMEOUT after its first repetition; use fewer tasks or less work per task, or raise "
            "max_seconds_per_case");
  // A repetition the bound allows: every process runs one warm-up and one measured
  // repetition at least, so 3 x (5 s + O) + max(10 s budget, 3 x 5 s).
  v1::Plan within = plan;
  within.mutable_matrix(0)->mutable_batch()->set_tasks(5000);
  const PlanCost slow = EstimatePlanCost(within, false, 2);
  EXPECT_EQ(slow.overrun_cases, 0);
  EXPECT_EQ(RepetitionOverrunWarning(slow), "");
  EXPECT_NEAR(Secs(slow.expected), 3 * (5 + O) + 15, kTol);
  // Worst: racing's 16 processes, each warming up W + R and measuring its share + R, four
  // times (three contention re-measures).
  EXPECT_NEAR(Secs(slow.worst), 4 * (16 * (0.5 + 5 + O) + 10 + 16 * 5), kTol);
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

TEST(PlanCost, TheRunnersProcessRangeIsTheMaximumOfItsSettings) {
  v1::MeasurementSettings s;
  s.set_processes(5);
  s.set_rounds(2);
  s.set_max_processes(4);  // raised to the minimum
  const BatchProcesses p = BatchProcessRange(s);
  EXPECT_EQ(p.min, 5);
  EXPECT_EQ(p.max, 5);
}

}  // namespace
}  // namespace fleetmark::engine
