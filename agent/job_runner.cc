#include "agent/job_runner.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/health/preflight.h"

namespace fleetmark::agent {

JobRunner::JobRunner(JobExecutor* executor, JobEvents events) : executor_(executor), events_(std::move(events)) {}

JobRunner::~JobRunner() { CancelAndWait(); }

absl::Status JobRunner::Start(fleetmark::v1::JobAssignment job) {
  if (job.job_id().empty()) return absl::InvalidArgumentError("assignment.job_id: empty");
  std::thread finished;
  {
    absl::MutexLock lock(&mu_);
    if (!running_job_id_.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat("agent is busy with job ", running_job_id_, "; job ", job.job_id(), " was not started"));
    }
    // The previous job's thread has reported on_finished and is about to exit.
    finished = std::move(thread_);
    cancel_.store(false);
    defer_reason_.clear();
    running_job_id_ = job.job_id();
  }
  if (finished.joinable()) finished.join();
  absl::MutexLock lock(&mu_);
  thread_ = std::thread([this, job = std::move(job)]() mutable { RunJob(std::move(job)); });
  return absl::OkStatus();
}

void JobRunner::RunJob(fleetmark::v1::JobAssignment job) {
  JobCallbacks callbacks;
  callbacks.on_result = [&](const fleetmark::v1::CaseResult& result) { events_.on_result(job, result); };
  callbacks.on_progress = [&](uint32_t done, uint32_t total, const std::string& current_case_id) {
    if (!events_.on_progress) return;
    fleetmark::v1::JobProgress progress;
    progress.set_job_id(job.job_id());
    progress.set_cases_done(done);
    progress.set_cases_total(total);
    progress.set_current_case_id(current_case_id);
    events_.on_progress(progress);
  };
  const absl::Status status = executor_->Run(job, callbacks, cancel_);

  fleetmark::v1::JobFinished finished;
  finished.set_job_id(job.job_id());
  {
    absl::MutexLock lock(&mu_);
    if (!defer_reason_.empty()) {
      finished.set_deferred(true);
      finished.set_message(defer_reason_);
    }
    running_job_id_.clear();
  }
  if (!finished.deferred()) {
    finished.set_cancelled(cancel_.load());
    finished.set_ok(status.ok() && !finished.cancelled());
    finished.set_deferred(engine::IsDeferred(status));
    if (!status.ok()) {
      finished.set_message(std::string(status.message()));
    } else if (finished.cancelled()) {
      finished.set_message("cancelled");
    }
  }
  if (events_.on_finished) events_.on_finished(finished);
}

bool JobRunner::Cancel(absl::string_view job_id) {
  absl::MutexLock lock(&mu_);
  if (running_job_id_.empty() || running_job_id_ != job_id) return false;
  cancel_.store(true);
  return true;
}

bool JobRunner::Defer(absl::string_view job_id, std::string reason) {
  absl::MutexLock lock(&mu_);
  if (running_job_id_.empty() || running_job_id_ != job_id) return false;
  if (defer_reason_.empty()) defer_reason_ = std::move(reason);
  cancel_.store(true);
  return true;
}

std::string JobRunner::running_job_id() const {
  absl::MutexLock lock(&mu_);
  return running_job_id_;
}

void JobRunner::CancelAndWait() {
  std::thread thread;
  {
    absl::MutexLock lock(&mu_);
    cancel_.store(true);
    thread = std::move(thread_);
  }
  if (thread.joinable()) thread.join();
}

}  // namespace fleetmark::agent
