// The fleet watch's progress lines (coordinator/cli/run_watch.h): the ETA per job from
// the rate its cases completed at while watched and from the run's cost, and the line
// that shows it; `fleetmark run`'s progress bar's ETA (progress_bar.h).
#include "coordinator/cli/run_watch.h"

#include <cstdio>
#include <cstdlib>

#include "coordinator/cli/progress_bar.h"

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

// Issue 34's second trial: the quickstart's ETA grew from 46 s to 12 min. With the
// run's cost (submit prices the plan), a job's ETA is the model's range from the start,
// raised by the job's own rate when that is slower; without it, the rate alone.
TEST(JobEtaTest, WithTheRunsCostTheEtaIsTheModelsRangeFromTheStart) {
  engine::PlanCost cost;
  cost.expected = absl::Seconds(288);
  cost.worst = absl::Seconds(3085);
  JobEta eta(cost);
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  const v1::RunInfo started = MakeRun("running", 0, 180);
  eta.Observe(started, t0);
  EXPECT_EQ(eta.EtaText(started.jobs(0), t0), "4m48s, at most 51m25s");
  EXPECT_EQ(JobLine(started.jobs(0), eta.EtaText(started.jobs(0), t0)),
            "  box2  running  [                    ] 0/180  ETA 4m48s, at most 51m25s");
  // 60 cases in 30 s: the rate says 1m00s left, the model 4m18s.
  const v1::RunInfo fast = MakeRun("running", 60, 180);
  eta.Observe(fast, t0 + absl::Seconds(30));
  EXPECT_EQ(eta.Eta(fast.jobs(0), t0 + absl::Seconds(30)), absl::Seconds(60));
  EXPECT_EQ(eta.EtaText(fast.jobs(0), t0 + absl::Seconds(30)), "4m18s, at most 50m55s");
  // Slower than the model: 10 cases in 600 s, 170 left at 60 s each.
  JobEta slow_eta(cost);
  slow_eta.Observe(started, t0);
  const v1::RunInfo slow = MakeRun("running", 10, 180);
  slow_eta.Observe(slow, t0 + absl::Seconds(600));
  EXPECT_EQ(slow_eta.EtaText(slow.jobs(0), t0 + absl::Seconds(600)), "2h50m");
  // A later attempt skips what was stored: the plan's price no longer applies.
  const v1::RunInfo retried = MakeRun("running", 0, 180, 2);
  eta.Observe(retried, t0 + absl::Seconds(40));
  EXPECT_EQ(eta.EtaText(retried.jobs(0), t0 + absl::Seconds(40)), "?");
  // Without a cost: the rate, "?" before it.
  JobEta plain;
  plain.Observe(started, t0);
  EXPECT_EQ(plain.EtaText(started.jobs(0), t0), "?");
  plain.Observe(fast, t0 + absl::Seconds(30));
  EXPECT_EQ(plain.EtaText(fast.jobs(0), t0 + absl::Seconds(30)), "1m00s");
}

// `fleetmark run`'s bar: its first ETA is the plan's range, not "?" or the rate.
TEST(ProgressBarTest, TheEtaIsTheModelsRangeFromTheFirstLine) {
  engine::PlanCost cost;
  cost.expected = absl::Seconds(288);
  cost.worst = absl::Seconds(3085);
  char* buffer = nullptr;
  size_t size = 0;
  std::FILE* stream = open_memstream(&buffer, &size);
  ASSERT_NE(stream, nullptr);
  {
    ProgressBar bar(stream, cost);
    engine::RunProgress p;
    p.cases_total = 180;
    p.slices_total = 540;
    p.rounds = 3;
    p.round = 1;
    bar.Update(p);
    p.slices_done = 10;
    p.elapsed = absl::Seconds(10);
    p.eta = absl::Seconds(46);  // the runner's rate: the fewest processes per case
    bar.Update(p);
  }
  std::fclose(stream);
  const std::string drawn(buffer, size);
  std::free(buffer);
  EXPECT_THAT(drawn, HasSubstr("0s elapsed  ETA 4m48s, at most 51m25s"));
  EXPECT_THAT(drawn, HasSubstr("10s elapsed  ETA 4m38s, at most 51m15s"));
  EXPECT_THAT(drawn, Not(HasSubstr("ETA ?")));
  EXPECT_THAT(drawn, Not(HasSubstr("ETA 46s")));
}

}  // namespace
}  // namespace fleetmark::cli
