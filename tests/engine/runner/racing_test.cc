// RunPlan's pairing and racing (runner.h) with a fake batch slice executor
// (RunOptions::batch_slice_executor): known medians per strategy, no child processes.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/common/partial_result.h"
#include "engine/measure/contention.h"
#include "engine/plan/case_group.h"
#include "engine/runner/runner.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "tests/engine/runner/plan_text.h"

namespace fleetmark::engine {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Two strategies ("fast", "slow" labels) at two points of a wait_us sweep, plus a
// single-strategy matrix (its own group of one).
constexpr char kPlan[] = R"pb(
  name: "race"
  matrix {
    strategies { name: "direct" label: "fast" }
    strategies { name: "direct" label: "slow" }
    workloads: [ "synthetic" ]
    batch { tasks: 1 }
    sweeps {
      param: "wait_us"
      values: [ 0, 1 ]
    }
  }
  matrix {
    strategies { name: "direct" label: "alone" }
    workloads: [ "arithmetic" ]
    batch { tasks: 1 }
  }
  measurement { warmup_seconds: 0 max_processes: 5 shuffle_seed: 7 }
)pb";

// The fake executor: every call is one process; its 10 samples are `median(label,
// call number of that case)` ns. Records the order of the calls.
struct FakeExecutor {
  std::function<double(const std::string& label, int process)> median;
  // Context switches per process's 10 repetitions (the counters), by label; none = no counters.
  std::map<std::string, int64_t> switches;
  std::vector<std::string> calls;  // case ids, in call order
  std::map<std::string, int> processes;

  runner::SliceResponse operator()(const runner::SliceRequest& request, absl::Duration) {
    calls.push_back(request.spec().case_id());
    const int process = ++processes[request.spec().case_id()];
    const double m = median(request.spec().strategy().label(), process);
    runner::SliceResponse response;
    response.set_status(v1::CASE_STATUS_OK);
    for (int i = 0; i < 10; ++i) response.add_samples_ns(static_cast<int64_t>(std::llround(m)));
    response.set_measured_seconds(0.001);
    response.set_stop_reason(v1::STOP_REASON_CI_TARGET);
    if (const auto it = switches.find(request.spec().strategy().label()); it != switches.end()) {
      response.mutable_counters()->set_repetitions(10);
      response.mutable_counters()->set_voluntary_context_switches(it->second);
    }
    return response;
  }
};

struct FakeRun {
  std::map<std::string, v1::CaseResult> by_id;
  std::vector<std::string> calls;
};

FakeRun RunFake(const v1::Plan& plan, std::function<double(const std::string&, int)> median, RunOptions options = {},
                std::map<std::string, int64_t> switches = {}) {
  FakeExecutor fake;
  fake.median = std::move(median);
  fake.switches = std::move(switches);
  // A wait for a CPU costs 0.1 ms under the fake's other work (no real probe: it takes
  // 0.2 s of real time per contended process).
  if (!options.scheduling_delay_probe) {
    options.scheduling_delay_probe = [] { return SchedulingDelay{.wakeups = 100, .wakeup_bound_ns = 1e5}; };
  }
  options.batch_slice_executor = [&](const runner::SliceRequest& r, absl::Duration d) { return fake(r, d); };
  FakeRun run;
  absl::StatusOr<RunSummary> summary = RunPlan(
      plan, options, [&](const v1::CaseResult& r) { run.by_id[r.spec().case_id()] = r; }, nullptr);
  EXPECT_TRUE(summary.ok()) << summary.status();
  run.calls = fake.calls;
  return run;
}

const v1::CaseResult& Find(const FakeRun& run, const std::string& label, const std::string& point) {
  for (const auto& [id, r] : run.by_id) {
    if (r.spec().strategy().label() == label && id.find(point) != std::string::npos) return r;
  }
  static const v1::CaseResult none;
  ADD_FAILURE() << "no result for " << label << " at " << point;
  return none;
}

std::vector<uint32_t> Rounds(const v1::CaseResult& r) { return {r.process_rounds().begin(), r.process_rounds().end()}; }

// A 40x gap, from one sample per process: decided after the minimum 3 rounds, the slow
// one eliminated; the single strategy gets exactly its 3 processes.
TEST(RacingTest, AFortyFoldGapIsDecidedAfterThreeRoundsWithTheSlowOneEliminated) {
  const FakeRun run = RunFake(PlanFrom(kPlan), [](const std::string& label, int process) {
    const double jitter = 1.0 + 0.01 * (process % 3);  // a little process-to-process noise
    return (label == "slow" ? 40e6 : 1e6) * jitter;
  });
  ASSERT_EQ(run.by_id.size(), 5u);
  for (const char* point : {"wait_us=0]", "wait_us=1]"}) {
    const v1::CaseResult& fast = Find(run, "fast", point);
    const v1::CaseResult& slow = Find(run, "slow", point);
    EXPECT_EQ(fast.stop_reason(), v1::STOP_REASON_GROUP_DECIDED) << point;
    EXPECT_EQ(slow.stop_reason(), v1::STOP_REASON_ELIMINATED) << point;
    EXPECT_THAT(Rounds(fast), ElementsAre(1, 2, 3)) << point;
    EXPECT_THAT(Rounds(slow), ElementsAre(1, 2, 3)) << point;
    EXPECT_EQ(fast.process_medians_ns_size(), 3);
    EXPECT_EQ(fast.status(), v1::CASE_STATUS_OK);
    EXPECT_FALSE(fast.contended());
  }
  const v1::CaseResult& alone = Find(run, "alone", "arithmetic");
  EXPECT_THAT(Rounds(alone), ElementsAre(1, 2, 3));
  EXPECT_NE(alone.stop_reason(), v1::STOP_REASON_GROUP_DECIDED);
  EXPECT_NE(alone.stop_reason(), v1::STOP_REASON_GROUP_UNDECIDED);
  EXPECT_EQ(run.calls.size(), 15u);  // 5 cases x 3 processes, no more
}

// The contenders of a point run back to back in every round; the order within a point
// and the order of the groups are shuffled per round.
TEST(RacingTest, ContendersOfAPointRunBackToBackInShuffledOrder) {
  const FakeRun run = RunFake(PlanFrom(kPlan), [](const std::string&, int process) {
    return process % 2 == 0 ? 1.2e6 : 1e6;  // equal strategies: the race goes on
  });
  // Group each round's calls: 5 cases per round while all are open (rounds 1-3).
  ASSERT_GE(run.calls.size(), 15u);
  std::set<std::string> first_of_round, fast_first;
  for (size_t round = 0; round < 3; ++round) {
    std::vector<std::string> calls(run.calls.begin() + 5 * round, run.calls.begin() + 5 * round + 5);
    first_of_round.insert(calls.front());
    for (size_t i = 0; i < calls.size(); ++i) {
      if (calls[i].find("synthetic") == std::string::npos) continue;
      // Its partner (same point, other strategy) is right before or right after it.
      const std::string point = calls[i].substr(0, calls[i].find("/blocking/"));
      const bool before = i > 0 && calls[i - 1].rfind(point, 0) == 0;
      const bool after = i + 1 < calls.size() && calls[i + 1].rfind(point, 0) == 0;
      EXPECT_TRUE(before != after) << "round " << round + 1 << ": " << calls[i];
      if (after && calls[i].find("wait_us=0]") != std::string::npos) fast_first.insert(calls[i]);
    }
  }
  // Shuffled: not the same case first in every round, nor the same order in a point.
  EXPECT_GT(first_of_round.size() + fast_first.size(), 2u);
}

// Equal contenders whose rounds disagree (each faster by 20 % in every other round)
// are never decided: they run to the cap (max_processes 5) and end undecided, their
// processes paired round by round.
TEST(RacingTest, EqualContendersRunToTheCapAndEndUndecided) {
  const FakeRun run = RunFake(PlanFrom(kPlan), [](const std::string& label, int process) {
    const bool fast_round = (process % 2 == 0) == (label == "fast");
    return fast_round ? 1e6 : 1.2e6;
  });
  for (const char* point : {"wait_us=0]", "wait_us=1]"}) {
    for (const char* label : {"fast", "slow"}) {
      const v1::CaseResult& r = Find(run, label, point);
      EXPECT_EQ(r.stop_reason(), v1::STOP_REASON_GROUP_UNDECIDED) << label << " " << point;
      EXPECT_THAT(Rounds(r), ElementsAre(1, 2, 3, 4, 5)) << label << " " << point;
    }
  }
  EXPECT_THAT(Rounds(Find(run, "alone", "arithmetic")), ElementsAre(1, 2, 3));
}

// Identical contenders end equivalent (within the margin) or, if the interval is still
// wider than the margin at the cap, undecided — never a winner.
TEST(RacingTest, IdenticalContendersAreEquivalentOrUndecidedNeverAWinner) {
  const FakeRun run = RunFake(PlanFrom(kPlan), [](const std::string&, int) { return 1e6; });
  for (const char* point : {"wait_us=0]", "wait_us=1]"}) {
    const v1::CaseResult& fast = Find(run, "fast", point);
    const v1::CaseResult& slow = Find(run, "slow", point);
    for (const v1::CaseResult* r : {&fast, &slow}) {
      EXPECT_TRUE(r->stop_reason() == v1::STOP_REASON_GROUP_EQUIVALENT ||
                  r->stop_reason() == v1::STOP_REASON_GROUP_UNDECIDED)
          << v1::StopReason_Name(r->stop_reason());
      if (r->stop_reason() == v1::STOP_REASON_GROUP_UNDECIDED) {
        EXPECT_EQ(r->process_rounds_size(), 5);
      }
      EXPECT_GE(r->process_rounds_size(), 3);
    }
    EXPECT_EQ(Rounds(fast), Rounds(slow));
  }
}

// --quick keeps at least 3 processes per batch case and caps the race at 6; the results
// say they are quick.
TEST(RacingTest, QuickMeasuresThreeProcessesAndSaysSo) {
  v1::Plan plan = PlanFrom(kPlan);
  plan.mutable_measurement()->clear_max_processes();
  plan.mutable_quick()->set_processes(1);  // raised to 3
  RunOptions options;
  options.quick = true;
  const FakeRun run = RunFake(
      plan, [](const std::string& label, int process) { return (process % 2 == 0) == (label == "fast") ? 1e6 : 1.2e6; },
      options);
  for (const auto& [id, r] : run.by_id) {
    EXPECT_TRUE(r.quick()) << id;
    EXPECT_GE(r.process_rounds_size(), 3) << id;
    EXPECT_LE(r.process_rounds_size(), 6) << id;
  }
  EXPECT_EQ(Find(run, "fast", "wait_us=0]").process_rounds_size(), 6);  // undecided: to the quick cap
}

// Every read of /proc/stat: 100 more ticks, 90 of them busy (others' work: the fake
// uses no CPU), so every process is contended at 90 %.
std::function<absl::StatusOr<std::string>()> NinetyPercentBusy() {
  auto ticks = std::make_shared<uint64_t>(0);
  return [ticks]() -> absl::StatusOr<std::string> {
    *ticks += 100;
    return absl::StrCat("cpu  ", *ticks * 9 / 10, " 0 0 ", *ticks / 10, " 0 0 0 0 0 0\n");
  };
}

// A process during which other work took most of the machine is measured again;
// still contended, the case is marked, and its group ends undecided after the minimum
// rounds instead of racing on: 5x slower at 90 % other work (up to 10x of it may be that
// work's, engine/measure/verdict.h).
TEST(RacingTest, AContendedGroupIsMeasuredAgainThenEndsUndecided) {
  RunOptions options;
  options.proc_stat_reader = NinetyPercentBusy();
  const FakeRun run = RunFake(
      PlanFrom(kPlan), [](const std::string& label, int) { return label == "slow" ? 5e6 : 1e6; }, options);
  for (const char* point : {"wait_us=0]", "wait_us=1]"}) {
    for (const char* label : {"fast", "slow"}) {
      const v1::CaseResult& r = Find(run, label, point);
      EXPECT_TRUE(r.contended()) << label;
      EXPECT_GT(r.other_cpu_share(), 0.8) << label;
      EXPECT_EQ(r.stop_reason(), v1::STOP_REASON_GROUP_UNDECIDED) << label;
      EXPECT_THAT(Rounds(r), ElementsAre(1, 2, 3)) << label;
      EXPECT_THAT(r.message(), HasSubstr("contended: other work took 90% of the machine's CPU time"));
    }
  }
  // The first two processes are measured 1 + kContentionRetries times; both stayed
  // contended, so the load is persistent and the other 13 are measured twice each.
  EXPECT_EQ(run.calls.size(), 2u * (1 + kContentionRetries) + 13u * 2);
}

// Other work in bursts: the window of a process and of its first re-measure are busy,
// the next is clean, over and over. Re-measured up to kContentionRetries times, every
// process gets a clean window, so no case is contended and the 5x gap is decided.
TEST(RacingTest, ABurstOfOtherWorkIsWaitedOutNotMarked) {
  RunOptions options;
  auto calls = std::make_shared<uint64_t>(0);
  auto busy = std::make_shared<uint64_t>(0);
  options.proc_stat_reader = [calls, busy]() -> absl::StatusOr<std::string> {
    const uint64_t n = (*calls)++;
    const uint64_t window = n / 2;  // reads come in pairs: before and after a process
    if (n % 2 == 1 && window % 3 != 2) *busy += 90;
    const uint64_t total = (n + 1) * 100;
    return absl::StrCat("cpu  ", *busy, " 0 0 ", total - *busy, " 0 0 0 0 0 0\n");
  };
  const FakeRun run = RunFake(
      PlanFrom(kPlan), [](const std::string& label, int) { return label == "slow" ? 5e6 : 1e6; }, options);
  for (const char* point : {"wait_us=0]", "wait_us=1]"}) {
    for (const char* label : {"fast", "slow"}) {
      const v1::CaseResult& r = Find(run, label, point);
      EXPECT_FALSE(r.contended()) << label << " " << point;
      EXPECT_LT(r.other_cpu_share(), 0.25) << label << " " << point;
    }
    EXPECT_EQ(Find(run, "fast", point).stop_reason(), v1::STOP_REASON_GROUP_DECIDED) << point;
  }
  // Every process took three windows (two busy, one clean).
  EXPECT_EQ(run.calls.size() % 3, 0u);
}

// 40x slower at 90 % other work is beyond the 10x that work can explain: decided after
// the minimum rounds, contended or not.
TEST(RacingTest, AContendedGapBeyondWhatTheOtherWorkExplainsIsDecided) {
  RunOptions options;
  options.proc_stat_reader = NinetyPercentBusy();
  const FakeRun run = RunFake(
      PlanFrom(kPlan), [](const std::string& label, int) { return label == "slow" ? 40e6 : 1e6; }, options);
  for (const char* point : {"wait_us=0]", "wait_us=1]"}) {
    EXPECT_TRUE(Find(run, "slow", point).contended());
    EXPECT_EQ(Find(run, "slow", point).stop_reason(), v1::STOP_REASON_ELIMINATED) << point;
    EXPECT_EQ(Find(run, "fast", point).stop_reason(), v1::STOP_REASON_GROUP_DECIDED) << point;
    EXPECT_THAT(Rounds(Find(run, "fast", point)), ElementsAre(1, 2, 3)) << point;
  }
}

// Other work took 99 % of the machine: the share alone keeps 1 % of a contender's
// time, so a 20x gap cannot be told. A contender whose counters show 10 context switches
// per repetition, each wait costing at most 0.1 ms (the probe), lost at most 1 ms of its
// 20 ms: out (verdict.h, Contention, the second bound); the probe's figure is kept.
TEST(RacingTest, UnderSaturationTheWaitsForACpuBoundWhatOtherWorkAdded) {
  const auto busy99 = [] {
    auto ticks = std::make_shared<uint64_t>(0);
    return [ticks]() -> absl::StatusOr<std::string> {
      *ticks += 1000;
      return absl::StrCat("cpu  ", *ticks * 99 / 100, " 0 0 ", *ticks / 100, " 0 0 0 0 0 0\n");
    };
  };
  const auto median = [](const std::string& label, int) { return label == "slow" ? 20e6 : 1e6; };
  RunOptions options;
  options.proc_stat_reader = busy99();
  FakeRun run = RunFake(PlanFrom(kPlan), median, options);
  EXPECT_EQ(Find(run, "slow", "wait_us=0]").stop_reason(), v1::STOP_REASON_GROUP_UNDECIDED);
  options.proc_stat_reader = busy99();
  // One probe serves the contended processes of the next kSchedulingDelayReuse (the
  // fake run takes milliseconds): measured once, not once per process.
  auto probes = std::make_shared<int>(0);
  options.scheduling_delay_probe = [probes] {
    ++*probes;
    return SchedulingDelay{.wakeups = 100, .wakeup_bound_ns = 1e5};
  };
  run = RunFake(PlanFrom(kPlan), median, options, {{"slow", 100}, {"fast", 100}});
  EXPECT_EQ(*probes, 1);
  for (const char* point : {"wait_us=0]", "wait_us=1]"}) {
    const v1::CaseResult& slow = Find(run, "slow", point);
    EXPECT_TRUE(slow.contended()) << point;
    EXPECT_GT(slow.other_cpu_share(), 0.95) << point;
    EXPECT_DOUBLE_EQ(slow.wakeup_delay_ns(), 1e5) << point;
    EXPECT_DOUBLE_EQ(slow.preemption_delay_ns(), 0) << point;
    EXPECT_EQ(slow.stop_reason(), v1::STOP_REASON_ELIMINATED) << point;
    EXPECT_EQ(Find(run, "fast", point).stop_reason(), v1::STOP_REASON_GROUP_DECIDED) << point;
  }
}

TEST(RacingTest, OneGroupKeyForTheRunnerAndTheMap) {
  v1::CaseSpec a;
  a.set_scenario("batch");
  a.set_workload("synthetic");
  a.set_io_mode("blocking");
  a.set_placement("any");
  a.mutable_synthetic()->set_cpu_ns(1000);
  a.mutable_synthetic()->set_wait_us(10);
  a.add_swept("wait_us");
  a.mutable_strategy()->set_label("direct");
  v1::CaseSpec b = a;
  b.mutable_strategy()->set_label("fixed_pool_io");
  EXPECT_EQ(CasePointKey(a), CasePointKey(b));
  EXPECT_EQ(CasePointKey(a), "batch/synthetic[cpu_ns=1000,wait_us=10]/blocking/any");
  EXPECT_EQ(CaseGroupKey(a, {"wait_us"}, false), "batch/synthetic[cpu_ns=1000]/blocking/any");
  b.mutable_synthetic()->set_wait_us(100);
  EXPECT_NE(CasePointKey(a), CasePointKey(b));
  b = a;
  b.set_io_mode("suspending");
  EXPECT_NE(CasePointKey(a), CasePointKey(b));
}

// Issue 34, item 3: a run cancelled in round 3 (while the process of that round is in
// flight: the fake returns it CANCELLED, as a killed child does, with samples it must not
// keep) keeps every finished round as a partial result: CANCELLED, partial, rounds 1
// and 2 only, statistics over their samples; summary.partial counts them.
TEST(RacingTest, ACancellationKeepsTheFinishedRoundsAsPartialResults) {
  std::atomic<bool> cancelled{false};
  std::map<std::string, int> processes;
  RunOptions options;
  options.batch_slice_executor = [&](const runner::SliceRequest& request, absl::Duration) {
    const int process = ++processes[request.spec().case_id()];
    runner::SliceResponse response;
    for (int i = 0; i < 10; ++i) response.add_samples_ns(1000 * process + i);
    response.set_measured_seconds(0.001);
    if (process == 3) {
      cancelled = true;  // the run is cancelled while this process runs
      response.set_status(v1::CASE_STATUS_CANCELLED);
      return response;
    }
    response.set_status(v1::CASE_STATUS_OK);
    response.set_stop_reason(v1::STOP_REASON_MAX_TIME);
    return response;
  };
  const v1::Plan plan = PlanFrom(R"pb(name: "p"
                                      matrix {
                                        strategies { name: "direct" label: "a" }
                                        strategies { name: "direct" label: "b" }
                                        workloads: [ "arithmetic" ]
                                        batch { tasks: 1 }
                                      }
                                      measurement { warmup_seconds: 0 rounds: 5 shuffle_seed: 3 })pb");
  std::vector<v1::CaseResult> results;
  absl::StatusOr<RunSummary> summary = RunPlan(
      plan, options, [&](const v1::CaseResult& r) { results.push_back(r); }, &cancelled);
  ASSERT_TRUE(summary.ok()) << summary.status();
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(summary->cancelled, 2);
  EXPECT_EQ(summary->partial, 2);
  EXPECT_EQ(summary->not_started, 0);
  for (const v1::CaseResult& r : results) {
    EXPECT_EQ(r.status(), v1::CASE_STATUS_CANCELLED) << r.spec().case_id();
    EXPECT_TRUE(IsPartialResult(r)) << r.spec().case_id();
    EXPECT_THAT(r.message(), HasSubstr("partial: interrupted after 2 of at least 5 rounds"));
    EXPECT_THAT(Rounds(r), ElementsAre(1, 2)) << r.spec().case_id();
    // Rounds 1 and 2's samples (1000..1009, 2000..2009), none of the killed round 3's.
    ASSERT_EQ(r.samples_ns_size(), 20) << r.spec().case_id();
    EXPECT_EQ(*std::max_element(r.samples_ns().begin(), r.samples_ns().end()), 2009);
    EXPECT_EQ(r.stats().count(), 20u);
    EXPECT_EQ(r.stop_reason(), v1::STOP_REASON_UNSPECIFIED);  // it did not stop by a rule
  }
}

}  // namespace
}  // namespace fleetmark::engine
