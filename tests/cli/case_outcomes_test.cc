// The status -> exit code rule shared by `fleetmark run` and `fleetmark submit --wait`
// (coordinator/cli/case_outcomes.h): resource exhaustion and unsupported cases are
// outcomes, failed and timed-out cases (and unknown statuses) are failures.
#include "coordinator/cli/case_outcomes.h"

#include <initializer_list>

#include "coordinator/cli/command.h"
#include "gtest/gtest.h"

namespace fleetmark::cli {
namespace {

google::protobuf::RepeatedPtrField<v1::CaseResult> Results(std::initializer_list<int> statuses) {
  google::protobuf::RepeatedPtrField<v1::CaseResult> results;
  for (int s : statuses) results.Add()->set_status(static_cast<v1::CaseStatus>(s));
  return results;
}

TEST(CaseOutcomesTest, ResourceExhaustionIsCountedAndIsNotAFailure) {
  const CaseOutcomes outcomes = CountOutcomes(Results(
      {v1::CASE_STATUS_OK, v1::CASE_STATUS_OK, v1::CASE_STATUS_UNSUPPORTED, v1::CASE_STATUS_RESOURCE_EXHAUSTED}));
  EXPECT_EQ(outcomes.ok, 2);
  EXPECT_EQ(outcomes.unsupported, 1);
  EXPECT_EQ(outcomes.resource_exhausted, 1);
  EXPECT_EQ(outcomes.failed, 0);
  EXPECT_EQ(outcomes.total(), 4);
  EXPECT_EQ(ExitCodeForOutcomes(outcomes), kExitOk);
  EXPECT_EQ(OutcomeCounts(outcomes), "2 ok, 1 unsupported, 1 resource exhausted, 0 failed");
}

TEST(CaseOutcomesTest, FailedTimeoutAndUnknownStatusesExit3) {
  for (int failure :
       {int{v1::CASE_STATUS_FAILED}, int{v1::CASE_STATUS_TIMEOUT}, int{v1::CASE_STATUS_UNSPECIFIED}, 99}) {
    const CaseOutcomes outcomes =
        CountOutcomes(Results({v1::CASE_STATUS_OK, v1::CASE_STATUS_RESOURCE_EXHAUSTED, failure}));
    EXPECT_EQ(outcomes.failed, 1) << failure;
    EXPECT_EQ(ExitCodeForOutcomes(outcomes), kExitCasesFailed) << failure;
  }
}

TEST(CaseOutcomesTest, CancelledIsNeitherOutcomeNorFailure) {
  const CaseOutcomes outcomes = CountOutcomes(Results({v1::CASE_STATUS_OK, v1::CASE_STATUS_CANCELLED}));
  EXPECT_EQ(outcomes.cancelled, 1);
  EXPECT_EQ(outcomes.failed, 0);
  EXPECT_EQ(ExitCodeForOutcomes(outcomes), kExitOk);
}

// Issue 34's trial (D1): a case interrupted in a repetition that ran for minutes was
// counted "not run" though it had started; it is said apart.
TEST(CaseOutcomesTest, AStartedCaseWithNoFinishedRoundIsNotCountedAsNotRun) {
  google::protobuf::RepeatedPtrField<v1::CaseResult> results =
      Results({v1::CASE_STATUS_OK, v1::CASE_STATUS_CANCELLED, v1::CASE_STATUS_CANCELLED});
  results[1].set_started_unix_ns(1);  // started, no process_rounds
  const CaseOutcomes outcomes = CountOutcomes(results);
  EXPECT_EQ(outcomes.stopped_in_first_round, 1);
  EXPECT_EQ(KeptCounts(outcomes), "kept 1 finished case, 0 partial, 1 not run, 1 stopped in its first round");
  EXPECT_EQ(KeptCounts(CountOutcomes(Results({v1::CASE_STATUS_CANCELLED}))),
            "kept 0 finished cases, 0 partial, 1 not run");
}

}  // namespace
}  // namespace fleetmark::cli
