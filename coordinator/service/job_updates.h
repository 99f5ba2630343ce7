// Job state updates from agents (JobAccepted, JobProgress) with group commit
// (group_commit.h): a fan-out to 1 000 agents brings 1 000 JobAccepted within
// milliseconds; they are written as a few Store::UpdateJobs statements instead of
// 1 000 transactions. The callback gets OK after the commit, or the non-retryable
// error of the agent's own update (InvalidArgument naming the field).
//
// Thread-safety: as GroupCommitQueue.
#pragma once

#include <memory>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "coordinator/service/group_commit.h"
#include "coordinator/store/store.h"

namespace fleetmark::service {

using JobUpdateQueue = GroupCommitQueue<store::Store::JobUpdate, absl::Status>;

// Writes with Store::UpdateJobs, renewing each job's lease to now + `lease`, on one
// thread (batches of one coordinator never wait for each other's row locks).
// `store` must outlive the queue.
std::unique_ptr<JobUpdateQueue> MakeJobUpdateQueue(store::Store& store, absl::Duration lease);

}  // namespace fleetmark::service
