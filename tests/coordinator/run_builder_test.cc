// The run builder (coordinator/service/run_builder.h) over the in-memory store on a fake
// clock: submit and a schedule's fire build the same run from the same plan and
// selector, and each rule of a submitted run refuses with one message wherever it is
// checked (submit, schedule creation, a fire, a change's confirmation run).
#include "coordinator/service/run_builder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "coordinator/scheduler/cron.h"
#include "coordinator/service/change_monitor.h"
#include "coordinator/store/memory_store.h"
#include "engine/common/clock.h"
#include "tests/coordinator/store_fixtures.h"

namespace fleetmark::service {
namespace {

using store::SmallPlan;
using ::testing::HasSubstr;
using ::testing::StartsWith;

class RunBuilderTest : public ::testing::Test {
 protected:
  RunBuilderTest() : store_(store::StoreOptions{}, clock_), runs_(store_, clock_, {.max_attempts = 5}) {}

  std::string Register(const std::string& name) { return store::Agent(store_, name); }

  static v1::SubmitRunRequest Submit(const v1::Plan& plan, const std::string& selector,
                                     const std::string& filter = "") {
    v1::SubmitRunRequest request;
    *request.mutable_plan() = plan;
    request.set_selector(selector);
    request.set_filter(filter);
    return request;
  }

  static v1::Schedule Schedule(const v1::Plan& plan, const std::string& selector, const std::string& filter = "") {
    v1::Schedule schedule;
    schedule.set_name("nightly");
    schedule.set_cron("0 2 * * *");
    *schedule.mutable_plan() = plan;
    schedule.set_selector(selector);
    schedule.set_filter(filter);
    return schedule;
  }

  FakeClock clock_{absl::FromUnixSeconds(1'700'000'000)};
  store::MemoryStore store_;
  RunBuilder runs_;
};

TEST_F(RunBuilderTest, SubmitAndAFireBuildTheSameRun) {
  const std::string board = Register("board");
  Register("other");
  absl::StatusOr<store::NewRun> submitted = runs_.Submitted(Submit(SmallPlan(), "name=board"));
  ASSERT_TRUE(submitted.ok()) << submitted.status();
  absl::StatusOr<store::NewRun> fired = runs_.Scheduled(Schedule(SmallPlan(), "name=board"));
  ASSERT_TRUE(fired.ok()) << fired.status();
  for (const store::NewRun* run : {&*submitted, &*fired}) {
    EXPECT_EQ(run->agent_ids, std::vector<std::string>{board});
    EXPECT_EQ(run->max_attempts, 5u);
    EXPECT_EQ(run->cases_total, run->case_ids.size());
    EXPECT_FALSE(run->case_ids.empty());
    EXPECT_EQ(run->selector, "name=board");
    EXPECT_EQ(run->queue_expiry, absl::ZeroDuration());
  }
  EXPECT_EQ(submitted->case_ids, fired->case_ids);
  EXPECT_EQ(submitted->submitted_by, "cli");
  EXPECT_EQ(fired->submitted_by, "schedule:nightly");
}

TEST_F(RunBuilderTest, EachRuleRefusesAlikeAtSubmitScheduleCreationAndFire) {
  Register("board");
  const auto refusals = [&](const v1::Plan& plan, const std::string& selector, const std::string& filter) {
    return std::vector<absl::Status>{runs_.Submitted(Submit(plan, selector, filter)).status(),
                                     runs_.CheckSchedule(Schedule(plan, selector, filter)).status(),
                                     runs_.Scheduled(Schedule(plan, selector, filter)).status()};
  };
  v1::Plan invalid = SmallPlan();
  invalid.mutable_matrix(0)->add_workloads("no-such-workload");
  const std::vector<absl::Status> plan = refusals(invalid, "all", "");
  EXPECT_THAT(std::string(plan[0].message()), StartsWith("plan refused: "));
  EXPECT_THAT(std::string(plan[1].message()), StartsWith("schedule.plan refused: "));
  EXPECT_THAT(std::string(plan[2].message()), StartsWith("plan refused: "));
  for (const absl::Status& status : plan) {
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr("no-such-workload"));
  }
  for (const absl::Status& status : refusals(SmallPlan(), "all", "no-such-case")) {
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_THAT(std::string(status.message()), StartsWith("--filter: \"no-such-case\" matches none of the plan's "));
  }
  for (const absl::Status& status : refusals(SmallPlan(), "coers>=8", "")) {
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_THAT(std::string(status.message()), StartsWith("selector term 1 \"coers>=8\": unknown key \"coers\""));
  }
}

TEST_F(RunBuilderTest, ScheduleCheckReturnsTheFirstFireAndRefusesABadCron) {
  v1::Schedule schedule = Schedule(SmallPlan(), "all");
  absl::StatusOr<absl::Time> next = runs_.CheckSchedule(schedule);
  ASSERT_TRUE(next.ok()) << next.status();
  absl::StatusOr<scheduler::CronSchedule> cron = scheduler::CronSchedule::Parse(schedule.cron());
  ASSERT_TRUE(cron.ok());
  EXPECT_EQ(*next, cron->NextAfter(clock_.Now()));
  schedule.set_cron("61 * * * *");
  EXPECT_EQ(runs_.CheckSchedule(schedule).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(RunBuilderTest, NoMatchingAgentAndABadQueueOfflineAreRefused) {
  Register("board");
  absl::Status none = runs_.Submitted(Submit(SmallPlan(), "name=phone")).status();
  EXPECT_EQ(none.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(none.message()),
              HasSubstr("no online agent matches selector \"name=phone\" (1 agents known"));
  v1::SubmitRunRequest queued = Submit(SmallPlan(), "all");
  queued.set_queue_offline_ms(10);  // under the 1 s minimum
  absl::Status refused = runs_.Submitted(queued).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(refused.message()), StartsWith("queue_offline_ms: "));
  queued.set_queue_offline_ms(60'000);
  absl::StatusOr<store::NewRun> run = runs_.Submitted(queued);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->queue_expiry, absl::Minutes(1));
}

TEST_F(RunBuilderTest, AConfirmationRunIsBuiltOnItsAgentByTheSameRules) {
  const std::string board = Register("board");
  absl::StatusOr<store::NewRun> nightly = runs_.Scheduled(Schedule(SmallPlan(), "name=board"));
  ASSERT_TRUE(nightly.ok()) << nightly.status();
  ASSERT_FALSE(nightly->case_ids.empty());
  const std::vector<std::string> changed = {nightly->case_ids[0]};
  absl::StatusOr<store::NewRun> run = runs_.OnAgent(nightly->plan, /*quick=*/false, ExactCaseFilter(changed), board,
                                                    "board", ConfirmationTag({7}), absl::Hours(6));
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->agent_ids, std::vector<std::string>{board});
  EXPECT_EQ(run->case_ids, changed);
  EXPECT_EQ(run->cases_total, 1u);
  EXPECT_EQ(run->selector, "name=board");
  EXPECT_EQ(run->filter, ExactCaseFilter(changed));
  EXPECT_EQ(run->submitted_by, "confirmation of change 7");
  EXPECT_EQ(run->max_attempts, 5u);  // the builder's, as for submitted and scheduled runs
  EXPECT_EQ(run->queue_expiry, absl::Hours(6));
  // A filter matching none of the plan's cases is refused as at submit.
  absl::Status none = runs_
                          .OnAgent(nightly->plan, false, ExactCaseFilter({"no-such-case"}), board, "board",
                                   ConfirmationTag({7}), absl::Hours(6))
                          .status();
  EXPECT_EQ(none.code(), absl::StatusCode::kInvalidArgument) << none;
  EXPECT_THAT(std::string(none.message()), StartsWith("--filter: "));
}

}  // namespace
}  // namespace fleetmark::service
