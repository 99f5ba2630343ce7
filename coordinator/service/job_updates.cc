#include "coordinator/service/job_updates.h"

#include <vector>

namespace fleetmark::service {

std::unique_ptr<JobUpdateQueue> MakeJobUpdateQueue(store::Store& store, absl::Duration lease) {
  return std::make_unique<JobUpdateQueue>(
      "job update(s)",
      JobUpdateQueue::Ops{.write = [&store, lease](const std::vector<const store::Store::JobUpdate*>& batch)
                              -> absl::StatusOr<std::vector<absl::Status>> {
                            std::vector<store::Store::JobUpdate> updates;
                            updates.reserve(batch.size());
                            for (const store::Store::JobUpdate* u : batch) updates.push_back(*u);
                            absl::Status status = store.UpdateJobs(updates, lease);
                            if (!status.ok()) return status;
                            return std::vector<absl::Status>(batch.size(), absl::OkStatus());
                          },
                          .reject = [](const store::Store::JobUpdate&, const absl::Status& status) { return status; }},
      GroupCommitOptions{.threads = 1});
}

std::unique_ptr<JobEndQueue> MakeJobEndQueue(store::Store& store) {
  return std::make_unique<JobEndQueue>(
      "job end(s)",
      JobEndQueue::Ops{.write = [&store](const std::vector<const store::Store::JobEnd*>& batch)
                           -> absl::StatusOr<std::vector<absl::Status>> {
                         std::vector<store::Store::JobEnd> ends;
                         ends.reserve(batch.size());
                         for (const store::Store::JobEnd* e : batch) ends.push_back(*e);
                         return store.FinishJobs(ends);
                       },
                       .reject = [](const store::Store::JobEnd&, const absl::Status& status) { return status; }},
      GroupCommitOptions{.threads = 1});
}

}  // namespace fleetmark::service
