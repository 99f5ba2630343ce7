// The production JobExecutor: the engine's runner (engine/runner/runner.h).
#include <string>
#include <utility>

#include "agent/job_executor.h"
#include "engine/runner/runner.h"

namespace fleetmark::agent {
namespace {

class EngineJobExecutor final : public JobExecutor {
 public:
  explicit EngineJobExecutor(std::string child_executable) : child_executable_(std::move(child_executable)) {}

  absl::Status Run(const fleetmark::v1::JobAssignment& job, const JobCallbacks& callbacks,
                   const std::atomic<bool>& cancel) override {
    engine::RunOptions options;
    options.quick = job.quick();
    options.filter = job.filter();
    options.child_executable = child_executable_;
    options.run_id = job.run_id();
    options.job_id = job.job_id();
    // Cases an earlier attempt of this job already delivered are not measured again.
    options.skip_case_ids.insert(job.stored_case_ids().begin(), job.stored_case_ids().end());
    if (callbacks.on_progress) {
      options.on_progress = [&callbacks](const engine::RunProgress& progress) {
        callbacks.on_progress(static_cast<uint32_t>(progress.cases_done), static_cast<uint32_t>(progress.cases_total),
                              progress.current_case);
      };
    }
    absl::StatusOr<engine::RunSummary> summary = engine::RunPlan(job.plan(), options, callbacks.on_result, &cancel);
    if (summary.ok() && !summary->deferred.empty()) return engine::DeferredError(summary->deferred);
    return summary.status();
  }

 private:
  const std::string child_executable_;
};

}  // namespace

std::unique_ptr<JobExecutor> MakeEngineJobExecutor(std::string child_executable) {
  return std::make_unique<EngineJobExecutor>(std::move(child_executable));
}

}  // namespace fleetmark::agent
