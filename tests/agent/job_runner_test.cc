#include "agent/job_runner.h"

#include <atomic>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "engine/health/preflight.h"
#include "gtest/gtest.h"

namespace fleetmark::agent {
namespace {

// Emits `cases` results; with `block_until_cancel`, waits for cancellation first.
class FakeExecutor : public JobExecutor {
 public:
  int cases = 3;
  bool block_until_cancel = false;
  absl::Status status = absl::OkStatus();
  absl::Notification started;

  absl::Status Run(const v1::JobAssignment& job, const JobCallbacks& callbacks,
                   const std::atomic<bool>& cancel) override {
    if (!started.HasBeenNotified()) started.Notify();
    for (int i = 0; i < cases; ++i) {
      v1::CaseResult result;
      result.mutable_spec()->set_case_id(job.job_id() + "/" + std::to_string(i));
      callbacks.on_result(result);
      callbacks.on_progress(i + 1, cases, result.spec().case_id());
    }
    while (block_until_cancel && !cancel.load()) absl::SleepFor(absl::Milliseconds(1));
    return status;
  }
};

struct Recorder {
  absl::Mutex mu;
  std::vector<std::string> cases;
  std::vector<v1::JobProgress> progress;
  std::vector<v1::JobFinished> finished;

  // Waits until `n` jobs have finished; false on timeout.
  bool WaitFinished(size_t n) {
    absl::MutexLock lock(&mu);
    auto reached = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return finished.size() >= n; };
    return mu.AwaitWithTimeout(absl::Condition(&reached), absl::Seconds(30));
  }

  JobEvents Events() {
    return {
        .on_result =
            [this](const v1::JobAssignment&, const v1::CaseResult& r) {
              absl::MutexLock lock(&mu);
              cases.push_back(r.spec().case_id());
            },
        .on_progress =
            [this](const v1::JobProgress& p) {
              absl::MutexLock lock(&mu);
              progress.push_back(p);
            },
        .on_finished =
            [this](const v1::JobFinished& f) {
              absl::MutexLock lock(&mu);
              finished.push_back(f);
            },
    };
  }
};

v1::JobAssignment Job(const std::string& id) {
  v1::JobAssignment job;
  job.set_job_id(id);
  return job;
}

TEST(JobRunnerTest, RunsAJobAndReportsResultsProgressAndFinish) {
  FakeExecutor executor;
  Recorder recorder;
  JobRunner runner(&executor, recorder.Events());
  ASSERT_TRUE(runner.Start(Job("j1")).ok());
  ASSERT_TRUE(recorder.WaitFinished(1));
  absl::MutexLock lock(&recorder.mu);
  EXPECT_EQ(recorder.cases, (std::vector<std::string>{"j1/0", "j1/1", "j1/2"}));
  ASSERT_EQ(recorder.progress.size(), 3u);
  EXPECT_EQ(recorder.progress.back().cases_done(), 3u);
  EXPECT_EQ(recorder.progress.back().cases_total(), 3u);
  ASSERT_EQ(recorder.finished.size(), 1u);
  EXPECT_TRUE(recorder.finished[0].ok());
  EXPECT_FALSE(recorder.finished[0].cancelled());
  EXPECT_EQ(runner.running_job_id(), "");
}

TEST(JobRunnerTest, OneJobAtATimeAndCancellationByJobId) {
  FakeExecutor executor;
  executor.block_until_cancel = true;
  Recorder recorder;
  JobRunner runner(&executor, recorder.Events());
  ASSERT_TRUE(runner.Start(Job("long")).ok());
  ASSERT_TRUE(executor.started.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_EQ(runner.running_job_id(), "long");
  absl::Status busy = runner.Start(Job("other"));
  EXPECT_TRUE(absl::IsFailedPrecondition(busy));
  EXPECT_NE(busy.message().find("long"), std::string::npos);
  EXPECT_FALSE(runner.Cancel("other"));
  EXPECT_TRUE(runner.Cancel("long"));
  ASSERT_TRUE(recorder.WaitFinished(1));
  absl::MutexLock lock(&recorder.mu);
  ASSERT_EQ(recorder.finished.size(), 1u);
  EXPECT_TRUE(recorder.finished[0].cancelled());
  EXPECT_FALSE(recorder.finished[0].ok());
}

TEST(JobRunnerTest, ExecutorErrorsBecomeFailedJobsAndTheNextJobRuns) {
  FakeExecutor executor;
  executor.cases = 0;
  executor.status = absl::InvalidArgumentError("plan.matrix[0].strategies[0].name: bogus");
  Recorder recorder;
  JobRunner runner(&executor, recorder.Events());
  ASSERT_TRUE(runner.Start(Job("bad")).ok());
  ASSERT_TRUE(recorder.WaitFinished(1));
  {
    absl::MutexLock lock(&recorder.mu);
    ASSERT_EQ(recorder.finished.size(), 1u);
    EXPECT_FALSE(recorder.finished[0].ok());
    EXPECT_EQ(recorder.finished[0].message(), "plan.matrix[0].strategies[0].name: bogus");
  }
  executor.status = absl::OkStatus();
  EXPECT_TRUE(runner.Start(Job("")).code() == absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(runner.Start(Job("good")).ok());
  runner.CancelAndWait();
  absl::MutexLock lock(&recorder.mu);
  EXPECT_EQ(recorder.finished.size(), 2u);
}

TEST(JobRunnerTest, ADeferredJobIsReportedDeferredNotAsABenchmarkFailure) {
  const std::string reason = "deferred: battery: 12 % < 20 % and not charging (3 checks, 60 s of cool-down)";
  FakeExecutor executor;
  executor.cases = 1;
  executor.status = engine::DeferredError(reason);
  Recorder recorder;
  JobRunner runner(&executor, recorder.Events());
  ASSERT_TRUE(runner.Start(Job("gated")).ok());
  ASSERT_TRUE(recorder.WaitFinished(1));
  {
    absl::MutexLock lock(&recorder.mu);
    ASSERT_EQ(recorder.finished.size(), 1u);
    EXPECT_FALSE(recorder.finished[0].ok());
    EXPECT_FALSE(recorder.finished[0].cancelled());
    EXPECT_TRUE(recorder.finished[0].deferred());
    EXPECT_EQ(recorder.finished[0].message(), reason);
    EXPECT_EQ(recorder.cases.size(), 1u);  // the case measured before the gate failed is kept
  }
  // Another error with the same words is not a deferral.
  executor.status = absl::UnavailableError(reason);
  ASSERT_TRUE(runner.Start(Job("other")).ok());
  ASSERT_TRUE(recorder.WaitFinished(2));
  absl::MutexLock lock(&recorder.mu);
  EXPECT_FALSE(recorder.finished[1].deferred());
}

}  // namespace
}  // namespace fleetmark::agent
