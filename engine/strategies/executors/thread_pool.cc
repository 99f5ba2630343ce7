#include "engine/strategies/executors/thread_pool.h"

#include <utility>

#include "engine/strategies/executors/run_guarded.h"
#include "engine/strategies/executors/worker_threads.h"

namespace fleetmark::engine {

ThreadPool::~ThreadPool() { Stop(); }

absl::Status ThreadPool::Start(int threads, const ThreadOptions& options) {
  if (absl::Status s = ValidateExecutorStart(threads, options); !s.ok()) return s;
  {
    std::lock_guard lock(mu_);
    if (running_ || !threads_.empty()) {
      return absl::FailedPreconditionError("thread pool: already started");
    }
    running_ = true;
  }
  absl::Status started = StartWorkerThreads(
      threads, options, [this](int) { WorkerLoop(); }, threads_);
  if (!started.ok()) Stop();  // joins the workers already started
  return started;
}

absl::Status ThreadPool::Submit(std::function<void()> fn) {
  {
    std::lock_guard lock(mu_);
    if (!running_) return absl::FailedPreconditionError("thread pool: not running");
    queue_.push_back(std::move(fn));
  }
  cv_.notify_one();
  return absl::OkStatus();
}

void ThreadPool::Stop() {
  {
    std::lock_guard lock(mu_);
    running_ = false;
  }
  cv_.notify_all();
  for (OsThread& t : threads_) t.Join();
  threads_.clear();
}

void ThreadPool::WorkerLoop() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return !queue_.empty() || !running_; });
      if (queue_.empty()) return;  // stopping and drained
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    RunGuarded(task, "a thread pool task");
  }
}

}  // namespace fleetmark::engine
