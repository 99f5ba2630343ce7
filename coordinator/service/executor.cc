#include "coordinator/service/executor.h"

#include "absl/time/clock.h"

namespace fleetmark::service {

Executor::Executor(int threads, const Clock& clock) : clock_(clock) {
  if (threads < 1) threads = 1;
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Loop(); });
}

Executor::~Executor() { Shutdown(); }

void Executor::Post(std::function<void()> task) { PostAfter(absl::ZeroDuration(), std::move(task)); }

void Executor::PostAfter(absl::Duration delay, std::function<void()> task) {
  {
    absl::MutexLock lock(&mu_);
    if (stop_) return;
    queue_.push(Item{clock_.SteadyNow() + delay, seq_++, std::move(task)});
  }
}

void Executor::Shutdown() {
  {
    absl::MutexLock lock(&mu_);
    if (stop_ && threads_.empty()) return;
    stop_ = true;
  }
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> drop;
  {
    absl::MutexLock lock(&mu_);
    drop.swap(queue_);
  }
}

size_t Executor::pending() const {
  absl::MutexLock lock(&mu_);
  return queue_.size();
}

void Executor::Loop() {
  absl::MutexLock lock(&mu_);
  // absl::Mutex re-evaluates conditions when the holder unlocks: no notify needed.
  auto has_work = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_ || !queue_.empty(); };
  while (!stop_) {
    mu_.Await(absl::Condition(&has_work));
    if (stop_) break;
    const absl::Time due = queue_.top().due;
    if (due > clock_.SteadyNow()) {
      // Wakes at `due`, at a stop, or when an earlier item is queued.
      auto earlier = [this, due]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stop_ || queue_.empty() || queue_.top().due < due;
      };
      // RealClock: steady_wait.h's AwaitSteady (not Abseil's: a wall-clock step stalls it).
      clock_.AwaitWithDeadline(mu_, absl::Condition(&earlier), due);
      continue;
    }
    std::function<void()> task = std::move(const_cast<Item&>(queue_.top()).task);
    queue_.pop();
    mu_.Unlock();
    task();
    task = nullptr;
    mu_.Lock();
  }
}

}  // namespace fleetmark::service
