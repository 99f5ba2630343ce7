// The fleet watch's progress lines (coordinator/cli/run_watch.h): the ETA per job from
// the rate its cases completed at while watched, and the line that shows it.
#include "coordinator/cli/run_watch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace fleetmark::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

v1::RunInfo MakeRun(const std::string& status, uint32_t done, uint32_t total, uint32_t attempts = 1) {
  v1::RunInfo run;
  v1::JobInfo* job = run.add_jobs();
  job->set_job_id("j1");
  job->set_agent_name("box2");
  job->set_status(status);
  job->set_cases_done(done);
  job->set_cases_total(total);
  job->set_attempts(attempts);
  return run;
}

TEST(JobEtaTest, FromTheRateSinceTheWatchSawTheJobRunning) {
  JobEta eta;
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  eta.Observe(MakeRun("running", 2, 12), t0);
  EXPECT_EQ(eta.Eta(MakeRun("running", 2, 12).jobs(0), t0), std::nullopt);  // no case completed while watched
  // 3 cases in 30 s: 10 s a case, 7 left.
  const v1::RunInfo later = MakeRun("running", 5, 12);
  eta.Observe(later, t0 + absl::Seconds(30));
  EXPECT_EQ(eta.Eta(later.jobs(0), t0 + absl::Seconds(30)), absl::Seconds(70));
  // A new attempt starts over.
  const v1::RunInfo retried = MakeRun("running", 0, 12, 2);
  eta.Observe(retried, t0 + absl::Seconds(40));
  EXPECT_EQ(eta.Eta(retried.jobs(0), t0 + absl::Seconds(40)), std::nullopt);
  // Not running: no ETA.
  EXPECT_EQ(eta.Eta(MakeRun("queued", 0, 12).jobs(0), t0), std::nullopt);
}

TEST(JobEtaTest, LineShowsTheRoundedEtaOfRunningJobs) {
  EXPECT_EQ(JobLine(MakeRun("running", 5, 12).jobs(0), absl::Seconds(208.51)),
            "  box2  running  [########            ] 5/12  ETA 3m29s");
  EXPECT_THAT(JobLine(MakeRun("running", 0, 12).jobs(0), std::nullopt), HasSubstr("ETA ?"));
  // The agent's current case, escaped for the terminal.
  v1::JobInfo job = MakeRun("running", 5, 12).jobs(0);
  job.set_current_case_id("fixed_pool/arithmetic/batch\x1b[31m");
  const std::string line = JobLine(job, absl::Seconds(70));
  EXPECT_THAT(line, HasSubstr("5/12  ETA 1m10s  case fixed_pool/arithmetic/batch"));
  EXPECT_EQ(line.find('\x1b'), std::string::npos) << line;
  EXPECT_THAT(JobLine(MakeRun("done", 12, 12).jobs(0), std::nullopt), Not(HasSubstr("ETA")));
}

}  // namespace
}  // namespace fleetmark::cli
