// Job state updates from agents (JobAccepted, JobProgress, JobFinished) with group
// commit (group_commit.h): a fan-out to 1 000 agents brings 1 000 JobAccepted, and
// later 1 000 JobFinished, within milliseconds; they are written as a few
// RunStore::UpdateJobs / RunStore::FinishJobs transactions instead of 1 000 each. The
// callback gets OK after the commit, or the non-retryable error of the agent's own
// item (InvalidArgument naming the field; NotFound for a job end naming a job that is
// not the agent's).
//
// Thread-safety: as GroupCommitQueue.
#pragma once

#include <memory>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "coordinator/service/group_commit.h"
#include "coordinator/store/run_store.h"

namespace fleetmark::service {

using JobUpdateQueue = GroupCommitQueue<store::RunStore::JobUpdate, absl::Status>;

// Writes with RunStore::UpdateJobs, renewing each job's lease to now + `lease`, on one
// thread (batches of one coordinator never wait for each other's row locks).
// `store` must outlive the queue.
std::unique_ptr<JobUpdateQueue> MakeJobUpdateQueue(store::RunStore& store, absl::Duration lease);

using JobEndQueue = GroupCommitQueue<store::RunStore::JobEnd, absl::Status>;

// Writes with RunStore::FinishJobs on one thread: a run's ends from this coordinator take
// its row lock once per batch. `store` must outlive the queue.
std::unique_ptr<JobEndQueue> MakeJobEndQueue(store::RunStore& store);

}  // namespace fleetmark::service
