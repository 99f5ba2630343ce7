// The narrow interface between the agent and whatever measures a job's cases: the
// engine's runner in production (EngineJobExecutor), a fake in unit tests.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>

#include "absl/status/status.h"
#include "fleetmark/v1/agent.pb.h"
#include "fleetmark/v1/result.pb.h"

namespace fleetmark::agent {

struct JobCallbacks {
  // Called once per measured case with its final result (result_id empty), on the
  // thread running the job. Must not be empty.
  std::function<void(const fleetmark::v1::CaseResult&)> on_result;
  // Cases done / total and the case the job is on (JobProgress.current_case_id), on the
  // thread running the job. May be empty.
  std::function<void(uint32_t done, uint32_t total, const std::string& current_case_id)> on_progress;
};

class JobExecutor {
 public:
  virtual ~JobExecutor() = default;

  // Runs `job`'s plan (with its quick flag and filter) to the end, blocking the caller.
  // Returns OK when the plan ran (individual case failures are result statuses),
  // InvalidArgument for a plan the engine refuses (the message names the field), other
  // codes when execution could not proceed; engine::DeferredError (IsDeferred,
  // engine/health/preflight.h) when the plan's preflight gates kept failing. When `*cancel` becomes true the executor
  // stops soon and returns OK (cancelled cases are reported as results).
  virtual absl::Status Run(const fleetmark::v1::JobAssignment& job, const JobCallbacks& callbacks,
                           const std::atomic<bool>& cancel) = 0;
};

// The production executor: engine::RunPlan. `child_executable` is passed to the runner
// for cases that run in child processes ("" = /proc/self/exe, which must call
// engine::MaybeRunChild first in main). Thread-compatible: one Run at a time.
std::unique_ptr<JobExecutor> MakeEngineJobExecutor(std::string child_executable = "");

}  // namespace fleetmark::agent
