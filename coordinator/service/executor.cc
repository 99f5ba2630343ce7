#include "coordinator/service/executor.h"

#include "absl/time/clock.h"

namespace fleetmark::service {

Executor::Executor(int threads) {
  if (threads < 1) threads = 1;
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Loop(); });
}

Executor::~Executor() { Shutdown(); }

void Executor::Post(std::function<void()> task) { PostAfter(absl::ZeroDuration(), std::move(task)); }

void Executor::PostAfter(absl::Duration delay, std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return;
    queue_.push(Item{absl::Now() + delay, seq_++, std::move(task)});
  }
  cv_.notify_one();
}

void Executor::Shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_ && threads_.empty()) return;
    stop_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> drop;
  {
    std::lock_guard<std::mutex> lock(mu_);
    drop.swap(queue_);
  }
}

size_t Executor::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size();
}

void Executor::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    if (queue_.empty()) {
      cv_.wait(lock);
      continue;
    }
    const absl::Time due = queue_.top().due;
    if (due > absl::Now()) {
      cv_.wait_until(lock, absl::ToChronoTime(due));
      continue;
    }
    std::function<void()> task = std::move(const_cast<Item&>(queue_.top()).task);
    queue_.pop();
    // Another thread may pick up the next due item meanwhile.
    if (!queue_.empty()) cv_.notify_one();
    lock.unlock();
    task();
    task = nullptr;
    lock.lock();
  }
}

}  // namespace fleetmark::service
