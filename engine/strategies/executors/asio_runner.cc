#include "engine/strategies/executors/asio_runner.h"

#include <utility>

#include <boost/asio/post.hpp>

#include "engine/strategies/executors/run_guarded.h"
#include "engine/strategies/executors/worker_threads.h"

namespace fleetmark::engine {

AsioRunner::~AsioRunner() { Stop(); }

absl::Status AsioRunner::Start(int threads, const ThreadOptions& options) {
  if (absl::Status s = ValidateExecutorStart(threads, options); !s.ok()) return s;
  if (running_.load() || !threads_.empty()) {
    return absl::FailedPreconditionError("asio runner: already started");
  }
  contexts_.reserve(threads);
  guards_.reserve(threads);
  for (int k = 0; k < threads; ++k) {
    // Concurrency hint 1: each context is run by exactly one thread, so Asio may skip
    // locking its handler queue.
    contexts_.push_back(std::make_unique<boost::asio::io_context>(1));
    guards_.push_back(boost::asio::make_work_guard(*contexts_.back()));
  }
  // `contexts_` is not resized until Stop has joined these threads.
  absl::Status started = StartWorkerThreads(
      threads, options,
      [this](int k) {
        boost::asio::io_context* ctx = contexts_[k].get();
        // A handler that throws unwinds out of run(); log it and keep the loop going.
        bool finished = false;
        while (!finished) {
          RunGuarded(
              [&] {
                ctx->run();
                finished = true;
              },
              "an asio handler");
        }
      },
      threads_);
  if (!started.ok()) {
    Stop();  // stops the contexts and joins the threads already started
    return started;
  }
  running_.store(true);
  return absl::OkStatus();
}

boost::asio::io_context& AsioRunner::Next() {
  const unsigned k = next_.fetch_add(1, std::memory_order_relaxed);
  return *contexts_[k % contexts_.size()];
}

absl::Status AsioRunner::Submit(std::function<void()> fn) {
  if (!running_.load()) return absl::FailedPreconditionError("asio runner: not running");
  boost::asio::post(Next(), std::move(fn));
  return absl::OkStatus();
}

void AsioRunner::Stop() {
  running_.store(false);
  guards_.clear();
  for (auto& ctx : contexts_) ctx->stop();
  for (OsThread& t : threads_) t.Join();
  threads_.clear();
  contexts_.clear();
  next_.store(0);
}

}  // namespace fleetmark::engine
