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

}  // namespace
}  // namespace fleetmark::cli
