#include "coordinator/service/job_updates.h"

#include <vector>

namespace fleetmark::service {
namespace {

// The items of a group-commit batch by value, as the store's batch calls take them.
template <typename Item>
std::vector<Item> Copies(const std::vector<const Item*>& batch) {
  std::vector<Item> items;
  items.reserve(batch.size());
  for (const Item* item : batch) items.push_back(*item);
  return items;
}

// The one reject of both queues: the item's own error is its outcome.
template <typename Item>
absl::Status ItsError(const Item&, const absl::Status& status) {
  return status;
}

}  // namespace

std::unique_ptr<JobUpdateQueue> MakeJobUpdateQueue(store::RunStore& store, absl::Duration lease) {
  return std::make_unique<JobUpdateQueue>(
      "job update(s)",
      JobUpdateQueue::Ops{.write = [&store, lease](const std::vector<const store::RunStore::JobUpdate*>& batch)
                              -> absl::StatusOr<std::vector<absl::Status>> {
                            absl::Status status = store.UpdateJobs(Copies(batch), lease);
                            if (!status.ok()) return status;
                            return std::vector<absl::Status>(batch.size(), absl::OkStatus());
                          },
                          .reject = ItsError<store::RunStore::JobUpdate>},
      GroupCommitOptions{.threads = 1});
}

std::unique_ptr<JobEndQueue> MakeJobEndQueue(store::RunStore& store) {
  return std::make_unique<JobEndQueue>(
      "job end(s)",
      JobEndQueue::Ops{.write = [&store](const std::vector<const store::RunStore::JobEnd*>& batch)
                           -> absl::StatusOr<std::vector<absl::Status>> { return store.FinishJobs(Copies(batch)); },
                       .reject = ItsError<store::RunStore::JobEnd>},
      GroupCommitOptions{.threads = 1});
}

}  // namespace fleetmark::service
