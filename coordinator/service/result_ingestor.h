// Result ingestion with group commit (group_commit.h): case results from all agent
// streams are queued and written in batches (one transaction each,
// RunStore::InsertResults: COPY of the new ids, replays reported as duplicates); each
// result's callback runs only after its batch committed, so an ack never precedes the
// commit. While the database is unavailable batches are retried with backoff (agents
// keep their spool meanwhile); a batch failing for another reason is split so that
// only the bad result is rejected.
//
//   ResultIngestor ingestor(store, {.threads = 1});
//   ingestor.Submit(agent_id, std::move(result), [](const store::ResultOutcome& o) { ack(o); });
//
// Thread-safety: Submit is safe from any thread; callbacks run on ingestor threads and
// must return quickly. The destructor stops the threads; callbacks of unwritten results
// are dropped (their agents replay them).
#pragma once

#include <functional>
#include <string>

#include "coordinator/service/coordinator_metrics.h"
#include "coordinator/service/group_commit.h"
#include "coordinator/store/run_store.h"
#include "fleetmark/v1/result.pb.h"

namespace fleetmark::service {

using ResultIngestorOptions = GroupCommitOptions;

class ResultIngestor {
 public:
  using Callback = std::function<void(const store::ResultOutcome&)>;

  // `store` (and `metrics`, when not null: commit latency, batch size, results
  // ingested) must outlive the ingestor.
  ResultIngestor(store::RunStore& store, ResultIngestorOptions options, CoordinatorMetrics* metrics = nullptr);

  void Submit(std::string agent_id, v1::CaseResult result, Callback done);
  // Results queued or being written.
  size_t pending() const { return queue_.pending(); }

 private:
  struct Item {
    std::string agent_id;
    v1::CaseResult result;
  };
  GroupCommitQueue<Item, store::ResultOutcome> queue_;
};

}  // namespace fleetmark::service
