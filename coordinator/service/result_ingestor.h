// Result ingestion with group commit: case results from all agent streams are queued
// and written in batches (one transaction each, Store::InsertResults: COPY of the new
// ids, replays reported as duplicates); each result's callback runs only after its
// batch committed, so an ack
// never precedes the commit. While the database is unavailable batches are retried
// with backoff (agents keep their spool meanwhile); a batch failing for another reason
// is split so that only the bad result is rejected.
//
//   ResultIngestor ingestor(store, {.threads = 1});
//   ingestor.Submit(agent_id, std::move(result), [](const store::ResultOutcome& o) { ack(o); });
//
// Thread-safety: Submit is safe from any thread; callbacks run on ingestor threads and
// must return quickly. The destructor stops the threads; callbacks of unwritten results
// are dropped (their agents replay them).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "coordinator/store/store.h"
#include "fleetmark/v1/result.pb.h"

namespace fleetmark::service {

struct ResultIngestorOptions {
  int threads = 2;                 // writer threads (each holds one connection while writing)
  size_t max_batch = 500;          // results per transaction
  absl::Duration max_backoff = absl::Seconds(2);
};

class ResultIngestor {
 public:
  using Callback = std::function<void(const store::ResultOutcome&)>;

  ResultIngestor(store::Store& store, ResultIngestorOptions options);
  ~ResultIngestor();

  void Submit(std::string agent_id, v1::CaseResult result, Callback done);
  // Results queued or being written.
  size_t pending() const;

 private:
  struct Item {
    std::string agent_id;
    v1::CaseResult result;
    Callback done;
  };
  void Loop();
  // Writes `batch`; returns false (items kept) if the database is unavailable.
  bool Write(std::vector<Item>& batch);

  store::Store& store_;
  const ResultIngestorOptions options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item> queue_;
  size_t in_flight_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace fleetmark::service
