#include "engine/strategies/executors/elastic_pool.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "engine/strategies/executors/run_guarded.h"
#include "engine/strategies/executors/worker_threads.h"

namespace fleetmark::engine {

ElasticPool::~ElasticPool() { Stop(); }

absl::Status ElasticPool::Start(int max_threads, const ThreadOptions& options) {
  if (absl::Status s = ValidateExecutorStart(max_threads, options); !s.ok()) return s;
  std::lock_guard lock(mu_);
  if (running_ || !threads_.empty()) {
    return absl::FailedPreconditionError("elastic pool: already started");
  }
  max_threads_ = max_threads;
  options_ = options;
  running_ = true;
  return absl::OkStatus();
}

absl::Status ElasticPool::Submit(std::function<void()> fn) {
  std::unique_lock lock(mu_);
  if (!running_) return absl::FailedPreconditionError("elastic pool: not running");
  // Idle threads already promised to earlier queued tasks do not count as free.
  const bool idle_thread_free = idle_ > static_cast<int>(queue_.size());
  queue_.push_back(std::move(fn));
  if (idle_thread_free) {
    lock.unlock();
    cv_.notify_one();
    return absl::OkStatus();
  }
  if (static_cast<int>(threads_.size()) >= max_threads_) return absl::OkStatus();

  const int k = static_cast<int>(threads_.size());
  auto thread = StartThread(
      options_.stack_kib,
      [this, hook = options_.on_thread_start] {
        if (hook) RunGuarded(hook, "on_thread_start");
        WorkerLoop();
      },
      absl::StrCat(options_.name_prefix, "-", k));
  if (thread.ok()) {
    threads_.push_back(*std::move(thread));
    return absl::OkStatus();
  }
  if (threads_.empty()) {
    queue_.pop_back();  // nobody could ever run it
    return thread.status();
  }
  return absl::OkStatus();  // queued for the threads that exist
}

void ElasticPool::Stop() {
  std::vector<OsThread> threads;
  {
    std::lock_guard lock(mu_);
    running_ = false;
    threads.swap(threads_);
  }
  cv_.notify_all();
  for (OsThread& t : threads) t.Join();
}

int ElasticPool::threads_created() const {
  std::lock_guard lock(mu_);
  return static_cast<int>(threads_.size());
}

int ElasticPool::idle_threads() const {
  std::lock_guard lock(mu_);
  return idle_;
}

void ElasticPool::WorkerLoop() {
  std::unique_lock lock(mu_);
  for (;;) {
    if (!queue_.empty()) {
      std::function<void()> task = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      RunGuarded(task, "an elastic pool task");
      task = nullptr;  // destroy captures outside the lock
      lock.lock();
      continue;
    }
    if (!running_) return;
    ++idle_;
    cv_.wait(lock, [this] { return !queue_.empty() || !running_; });
    --idle_;
  }
}

}  // namespace fleetmark::engine
