// Group commit: items queued from many agent streams are written in batches, one
// transaction per batch, and each item's callback runs only after its batch committed
// (so an agent is never told "stored" before the commit). Used for case results
// (ResultIngestor) and job state updates (JobUpdateWriter).
//
// While the database is unavailable (a Retryable status) a batch is retried with
// exponential backoff, kept in front of the queue; a batch failing for another reason
// is split and written item by item, so that only the bad item gets Ops::reject.
//
//   GroupCommitQueue<Row, Outcome> queue({.write = WriteRows, .reject = Reject}, {.threads = 1});
//   queue.Submit(row, [](const Outcome& o) { ... });
//
// Thread-safety: Submit and pending are safe from any thread; callbacks run on the
// queue's threads and must return quickly. The destructor stops the threads; callbacks
// of unwritten items are dropped (agents resend them: results from their spool, job
// updates with the next message or the lease).
#pragma once

#include <algorithm>
#include <deque>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "engine/common/log.h"
#include "engine/common/steady_wait.h"

namespace fleetmark::service {

// The statuses a batch is retried on (the database is away or the transaction lost a
// race), rather than split.
inline bool Retryable(const absl::Status& status) {
  return absl::IsUnavailable(status) || absl::IsDeadlineExceeded(status) || absl::IsAborted(status) ||
         absl::IsResourceExhausted(status);
}

struct GroupCommitOptions {
  int threads = 2;         // writer threads (each holds one connection while writing)
  size_t max_batch = 500;  // items per transaction
  absl::Duration max_backoff = absl::Seconds(2);
};

template <typename Item, typename Outcome>
class GroupCommitQueue {
 public:
  struct Ops {
    // Writes `batch` in one transaction; one outcome per item, in order.
    std::function<absl::StatusOr<std::vector<Outcome>>(const std::vector<const Item*>& batch)> write;
    // The outcome of an item whose own write failed with the non-retryable `status`.
    std::function<Outcome(const Item& item, const absl::Status& status)> reject;
  };
  using Callback = std::function<void(const Outcome&)>;

  // `what` names the items in log lines ("result(s)").
  GroupCommitQueue(std::string what, Ops ops, GroupCommitOptions options)
      : what_(std::move(what)), ops_(std::move(ops)), options_(options) {
    for (int i = 0; i < std::max(1, options_.threads); ++i) threads_.emplace_back([this] { Loop(); });
  }

  ~GroupCommitQueue() {
    {
      absl::MutexLock lock(&mu_);
      stop_ = true;
    }
    for (std::thread& t : threads_) t.join();
  }

  GroupCommitQueue(const GroupCommitQueue&) = delete;
  GroupCommitQueue& operator=(const GroupCommitQueue&) = delete;

  void Submit(Item item, Callback done) {
    {
      absl::MutexLock lock(&mu_);
      if (stop_) return;
      queue_.push_back(Entry{std::move(item), std::move(done)});
    }
  }

  // Items queued or being written.
  size_t pending() const {
    absl::MutexLock lock(&mu_);
    return queue_.size() + in_flight_;
  }

 private:
  struct Entry {
    Item item;
    Callback done;
  };

  void Loop() {
    absl::Duration backoff = absl::Milliseconds(50);
    absl::MutexLock lock(&mu_);
    auto has_work = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_ || !queue_.empty(); };
    while (true) {
      mu_.Await(absl::Condition(&has_work));
      if (stop_) return;
      std::vector<Entry> batch;
      while (!queue_.empty() && batch.size() < options_.max_batch) {
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      in_flight_ += batch.size();
      mu_.Unlock();
      const bool written = Write(batch);
      mu_.Lock();
      in_flight_ -= batch.size();
      if (written) {
        backoff = absl::Milliseconds(50);
        continue;
      }
      // Database unavailable: put the batch back in front and wait before retrying.
      for (auto it = batch.rbegin(); it != batch.rend(); ++it) queue_.push_front(std::move(*it));
      AwaitSteadyFor(mu_, absl::Condition(&stop_), backoff);
      backoff = std::min(backoff * 2, options_.max_backoff);
    }
  }

  // Writes `batch`; false (entries kept) if the database is unavailable.
  bool Write(std::vector<Entry>& batch) {
    std::vector<const Item*> items;
    items.reserve(batch.size());
    for (const Entry& entry : batch) items.push_back(&entry.item);
    absl::StatusOr<std::vector<Outcome>> outcomes = ops_.write(items);
    if (!outcomes.ok()) {
      if (Retryable(outcomes.status())) {
        // Through the daemon's log, as every other line (time and level).
        ::fleetmark::Log(
            ::fleetmark::LogLevel::kWarning,
            absl::StrCat("storing ", batch.size(), " ", what_, " failed, will retry: ", outcomes.status().message()));
        return false;
      }
      if (batch.size() == 1) {
        batch[0].done(ops_.reject(batch[0].item, outcomes.status()));
        return true;
      }
      // Find the bad item(s): write one by one.
      for (Entry& entry : batch) {
        std::vector<Entry> one;
        one.push_back(std::move(entry));
        while (!Write(one)) {
          std::this_thread::sleep_for(std::chrono::milliseconds(200));
          absl::MutexLock lock(&mu_);
          if (stop_) return true;
        }
      }
      return true;
    }
    if (outcomes->size() != batch.size()) {  // a writer bug: never ack on a guess
      const absl::Status broken = absl::InternalError(
          absl::StrCat("storing ", what_, ": ", outcomes->size(), " outcomes for ", batch.size(), " items"));
      for (Entry& entry : batch) entry.done(ops_.reject(entry.item, broken));
      return true;
    }
    for (size_t i = 0; i < batch.size(); ++i) batch[i].done((*outcomes)[i]);
    return true;
  }

  const std::string what_;
  const Ops ops_;
  const GroupCommitOptions options_;
  mutable absl::Mutex mu_;
  std::deque<Entry> queue_ ABSL_GUARDED_BY(mu_);
  size_t in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;  // last: started after the members they use
};

}  // namespace fleetmark::service
