// The outcome line of a fleet run (coordinator/cli/remote_render.h, RunCasesLine), the
// one `submit --wait` and `runs show` print: planned cases that never ran are counted
// and say why (trial of 2026-12-02, finding 12: an expired --queue_offline run said
// "0 cases: 0 ok, ..." though 18 were planned).
#include "coordinator/cli/remote_render.h"

#include "gtest/gtest.h"

namespace fleetmark::cli {
namespace {

v1::JobInfo* AddJob(v1::ExportResultsResponse& exported, const std::string& id, const std::string& status,
                    uint32_t cases_total, const std::string& message = "") {
  v1::JobInfo* job = exported.mutable_run()->add_jobs();
  job->set_job_id(id);
  job->set_status(status);
  job->set_cases_total(cases_total);
  job->set_message(message);
  return job;
}

void AddResult(v1::ExportResultsResponse& exported, const std::string& job_id, v1::CaseStatus status) {
  v1::CaseResult* r = exported.add_results();
  r->set_job_id(job_id);
  r->set_status(status);
}

TEST(RunCasesLineTest, AnExpiredRunNamesThePlannedCasesThatDidNotRun) {
  v1::ExportResultsResponse exported;
  exported.mutable_run()->set_status("failed");
  AddJob(exported, "j1", "failed", 18,
         "infrastructure: expired: agent ok3 did not take the job by 2026-12-02 13:00:00 UTC (submit --queue_offline)");
  EXPECT_EQ(RunCasesLine(exported),
            "18 cases: 0 ok, 0 unsupported, 0 resource exhausted, 0 failed, 18 not run (expired)");
}

TEST(RunCasesLineTest, ADoneRunCountsItsResultsAndNothingMissing) {
  v1::ExportResultsResponse exported;
  exported.mutable_run()->set_status("done");
  AddJob(exported, "j1", "done", 2);
  AddResult(exported, "j1", v1::CASE_STATUS_OK);
  AddResult(exported, "j1", v1::CASE_STATUS_RESOURCE_EXHAUSTED);
  EXPECT_EQ(RunCasesLine(exported), "2 cases: 1 ok, 0 unsupported, 1 resource exhausted, 0 failed");
}

TEST(RunCasesLineTest, CancelledAndMissingCasesOfSeveralJobs) {
  v1::ExportResultsResponse exported;
  exported.mutable_run()->set_status("cancelled");
  AddJob(exported, "j1", "cancelled", 3);
  AddResult(exported, "j1", v1::CASE_STATUS_OK);
  AddResult(exported, "j1", v1::CASE_STATUS_CANCELLED);
  AddJob(exported, "j2", "failed", 2, "infrastructure: agent b lost (lease expired) after 3 of 3 attempts");
  EXPECT_EQ(RunCasesLine(exported),
            "5 cases: 1 ok, 0 unsupported, 0 resource exhausted, 0 failed, 1 cancelled, 3 not run (cancelled, failed)");
}

TEST(RunCasesLineTest, OneCaseIsSingular) {
  v1::ExportResultsResponse exported;
  AddJob(exported, "j1", "done", 1);
  AddResult(exported, "j1", v1::CASE_STATUS_OK);
  EXPECT_EQ(RunCasesLine(exported), "1 case: 1 ok, 0 unsupported, 0 resource exhausted, 0 failed");
}

}  // namespace
}  // namespace fleetmark::cli
