#include "coordinator/service/read_stores.h"

#include "absl/status/statusor.h"

namespace fleetmark::service {

store::RunStore& ReadStores::ForRun(const std::string& id_or_prefix) {
  if (router_ == nullptr || !router_->UseReplica()) return primary_;
  absl::StatusOr<v1::RunInfo> run = [&]() -> absl::StatusOr<v1::RunInfo> {
    absl::StatusOr<std::string> run_id = replica_->ResolveRunId(id_or_prefix);
    if (!run_id.ok()) return run_id.status();
    return replica_->GetRun(*run_id);
  }();
  if (!run.ok()) {
    if (absl::IsUnavailable(run.status())) router_->ReportReplicaFailure(run.status());
    return primary_;  // also a malformed id: the primary gives the same error
  }
  return RunFinished(run->status()) ? *replica_ : primary_;
}

}  // namespace fleetmark::service
