#include "coordinator/service/result_ingestor.h"

#include <iostream>

#include "absl/status/status.h"

namespace fleetmark::service {
namespace {

bool Retryable(const absl::Status& status) {
  return absl::IsUnavailable(status) || absl::IsDeadlineExceeded(status) || absl::IsAborted(status) ||
         absl::IsResourceExhausted(status);
}

}  // namespace

ResultIngestor::ResultIngestor(store::Store& store, ResultIngestorOptions options)
    : store_(store), options_(options) {
  for (int i = 0; i < std::max(1, options_.threads); ++i) threads_.emplace_back([this] { Loop(); });
}

ResultIngestor::~ResultIngestor() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void ResultIngestor::Submit(std::string agent_id, v1::CaseResult result, Callback done) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return;
    queue_.push_back(Item{std::move(agent_id), std::move(result), std::move(done)});
  }
  cv_.notify_one();
}

size_t ResultIngestor::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size() + in_flight_;
}

void ResultIngestor::Loop() {
  absl::Duration backoff = absl::Milliseconds(50);
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    std::vector<Item> batch;
    while (!queue_.empty() && batch.size() < options_.max_batch) {
      batch.push_back(std::move(queue_.front()));
      queue_.pop_front();
    }
    in_flight_ += batch.size();
    lock.unlock();
    const bool written = Write(batch);
    lock.lock();
    in_flight_ -= batch.size();
    if (written) {
      backoff = absl::Milliseconds(50);
      continue;
    }
    // Database unavailable: put the batch back in front and wait before retrying.
    for (auto it = batch.rbegin(); it != batch.rend(); ++it) queue_.push_front(std::move(*it));
    cv_.wait_for(lock, absl::ToChronoMilliseconds(backoff), [this] { return stop_; });
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
}

bool ResultIngestor::Write(std::vector<Item>& batch) {
  std::vector<store::Store::AgentResult> rows;
  rows.reserve(batch.size());
  for (const Item& item : batch) rows.push_back({item.agent_id, &item.result});
  absl::StatusOr<std::vector<store::ResultOutcome>> outcomes = store_.InsertResults(rows);
  if (!outcomes.ok()) {
    if (Retryable(outcomes.status())) {
      std::cerr << "fleetmark-coordinator: storing " << batch.size()
                << " result(s) failed, will retry: " << outcomes.status().message() << "\n";
      return false;
    }
    if (batch.size() == 1) {
      store::ResultOutcome rejected;
      rejected.result_id = batch[0].result.result_id();
      rejected.rejected = true;
      rejected.message = std::string(outcomes.status().message());
      batch[0].done(rejected);
      return true;
    }
    // Find the bad result(s): write one by one.
    for (Item& item : batch) {
      std::vector<Item> one;
      one.push_back(std::move(item));
      while (!Write(one)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        std::lock_guard<std::mutex> lock(mu_);
        if (stop_) return true;
      }
    }
    return true;
  }
  for (size_t i = 0; i < batch.size(); ++i) batch[i].done((*outcomes)[i]);
  return true;
}

}  // namespace fleetmark::service
