// Runs the agent's jobs one at a time on a dedicated thread, so benchmarks never overlap
// on a device and the connection thread stays free to read cancellations and acks.
//
//   JobRunner runner(executor.get(), {.on_result = ..., .on_finished = ...});
//   FLEETMARK_RETURN_IF_ERROR(runner.Start(assignment));
//   runner.Cancel(assignment.job_id());
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include "absl/strings/string_view.h"
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "agent/job_executor.h"
#include "fleetmark/v1/agent.pb.h"

namespace fleetmark::agent {

struct JobEvents {
  // Each case result of the running job (ids not yet assigned). On the job thread.
  std::function<void(const fleetmark::v1::JobAssignment& job, const fleetmark::v1::CaseResult& result)> on_result;
  // Progress of the running job. On the job thread. May be empty.
  std::function<void(const fleetmark::v1::JobProgress& progress)> on_progress;
  // Once per started job, when it ended (ok, failed or cancelled). On the job thread,
  // after the job stopped counting as running.
  std::function<void(const fleetmark::v1::JobFinished& finished)> on_finished;
};

// Thread-safe. The destructor cancels a running job and joins its thread.
class JobRunner {
 public:
  // `executor` must outlive the runner.
  JobRunner(JobExecutor* executor, JobEvents events);
  ~JobRunner();
  JobRunner(const JobRunner&) = delete;
  JobRunner& operator=(const JobRunner&) = delete;

  // Starts `job` on a new thread. FailedPrecondition (naming the running job) if one is
  // still running; InvalidArgument if job_id is empty.
  absl::Status Start(fleetmark::v1::JobAssignment job);

  // Requests cancellation of the running job if its id is `job_id`; returns whether it
  // was the running job. The job then finishes with cancelled = true.
  bool Cancel(absl::string_view job_id);

  // Stops the running job if its id is `job_id` (as Cancel) because this agent cannot
  // go on with it (e.g. its spool cannot hold results); returns whether it was the
  // running job. The job then finishes deferred (JobFinished.deferred, ok = false,
  // cancelled = false) with `reason` as its message, whatever the executor returns.
  // The first reason given stands.
  bool Defer(absl::string_view job_id, std::string reason);

  // Id of the running job, "" when idle.
  std::string running_job_id() const;

  // Cancels the running job (if any) and waits for its thread.
  void CancelAndWait();

 private:
  void RunJob(fleetmark::v1::JobAssignment job);

  JobExecutor* const executor_;
  const JobEvents events_;
  std::atomic<bool> cancel_{false};

  mutable absl::Mutex mu_;
  std::string running_job_id_ ABSL_GUARDED_BY(mu_);
  std::string defer_reason_ ABSL_GUARDED_BY(mu_);  // of the running job; "" = not deferred
  std::thread thread_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fleetmark::agent
