#include "engine/strategies/executors/fiber_runner.h"

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <utility>

#include <boost/fiber/algo/round_robin.hpp>
#include <boost/fiber/algo/work_stealing.hpp>
#include <boost/fiber/buffered_channel.hpp>
#include <boost/fiber/fiber.hpp>
#include <boost/fiber/fixedsize_stack.hpp>
#include <boost/fiber/operations.hpp>

#include "absl/strings/str_cat.h"
#include "engine/strategies/executors/run_guarded.h"
#include "engine/strategies/executors/worker_threads.h"

namespace fleetmark::engine {
namespace {

// Set once a work-stealing group has been built in this process (see the header).
std::atomic<bool> g_work_stealing_group_used{false};

// One Launch request, shared by all threads: thread k launches the fibres
// i = k, k + N, k + 2N, ... so the work starts spread over the group (work_stealing
// with suspend = true does not wake sleeping threads to steal, so launching every
// fibre on one thread would leave the others asleep).
struct Batch {
  int count;
  std::function<void(int)> body;
};
using Command = std::shared_ptr<const Batch>;

}  // namespace

struct FiberRunner::Shared {
  int threads = 0;
  int stack_kib = 0;
  // Per-thread command channels (capacity must be a power of two >= 2).
  std::vector<std::unique_ptr<boost::fibers::buffered_channel<Command>>> channels;

  // Start handshake: threads wait for `go_decided` before touching Boost.Fiber, so a
  // failed Start never leaves threads stuck in work_stealing's constructor barrier.
  std::mutex gate_mu;
  std::condition_variable gate_cv;
  bool go_decided = false;
  bool go = false;
  int ready = 0;  // threads whose scheduler is installed

  // Fibres launched and not yet finished; Stop waits for zero.
  std::mutex live_mu;
  std::condition_variable live_cv;
  long live = 0;

  void FiberDone() {
    std::lock_guard lock(live_mu);
    if (--live == 0) live_cv.notify_all();
  }

  void RunFiber(const Command& batch, int i) {
    RunGuarded([&] { batch->body(i); }, "a fibre");
    FiberDone();
  }

  void Spawn(const Command& batch, int i) {
    auto fn = [this, batch, i] { RunFiber(batch, i); };
    if (stack_kib > 0) {
      boost::fibers::fiber(std::allocator_arg,
                           boost::fibers::fixedsize_stack(static_cast<std::size_t>(stack_kib) * 1024), std::move(fn))
          .detach();
    } else {
      boost::fibers::fiber(std::move(fn)).detach();
    }
  }

  // Body of OS thread k, after its on_thread_start hook.
  void ThreadMain(int k) {
    {
      std::unique_lock lock(gate_mu);
      gate_cv.wait(lock, [this] { return go_decided; });
      if (!go) return;
    }
    if (threads >= 2) {
      // Blocks until all `threads` threads have constructed their scheduler.
      boost::fibers::use_scheduling_algorithm<boost::fibers::algo::work_stealing>(static_cast<std::uint32_t>(threads),
                                                                                  /*suspend=*/true);
    } else {
      boost::fibers::use_scheduling_algorithm<boost::fibers::algo::round_robin>();
    }
    {
      std::lock_guard lock(gate_mu);
      ++ready;
    }
    gate_cv.notify_all();
    // The thread's main fibre dispatches commands; while it waits on the channel the
    // scheduler runs (and steals) task fibres.
    Command batch;
    while (channels[k]->pop(batch) == boost::fibers::channel_op_status::success) {
      for (int i = k; i < batch->count; i += threads) Spawn(batch, i);
      batch.reset();
    }
  }
};

FiberRunner::FiberRunner() : shared_(std::make_shared<Shared>()) {}

FiberRunner::~FiberRunner() { Stop(); }

absl::Status FiberRunner::Start(int threads, const ThreadOptions& options) {
  if (absl::Status s = ValidateExecutorStart(threads, options); !s.ok()) return s;
  if (running_ || !os_threads_.empty()) {
    return absl::FailedPreconditionError("fiber runner: already started");
  }
  if (threads >= 2 && g_work_stealing_group_used.exchange(true)) {
    return absl::FailedPreconditionError(
        "fiber: Boost.Fiber 1.74's work_stealing scheduler keeps process-wide static "
        "state and can form only one thread group per process; this process already "
        "started one, so run each fiber case in its own process");
  }
  shared_ = std::make_shared<Shared>();
  shared_->threads = threads;
  shared_->stack_kib = options.stack_kib;
  for (int k = 0; k < threads; ++k) {
    shared_->channels.push_back(std::make_unique<boost::fibers::buffered_channel<Command>>(64));
  }
  os_threads_.reserve(threads);
  absl::Status failure;
  for (int k = 0; k < threads && failure.ok(); ++k) {
    auto thread = StartThread(
        /*stack_kib=*/0,
        [shared = shared_, k, hook = options.on_thread_start] {
          if (hook) RunGuarded(hook, "on_thread_start");
          shared->ThreadMain(k);
        },
        absl::StrCat(options.name_prefix, "-", k));
    if (thread.ok()) {
      os_threads_.push_back(*std::move(thread));
    } else {
      failure = thread.status();
    }
  }
  {
    std::unique_lock lock(shared_->gate_mu);
    shared_->go_decided = true;
    shared_->go = failure.ok();
    shared_->gate_cv.notify_all();
    if (failure.ok()) {
      shared_->gate_cv.wait(lock, [&] { return shared_->ready == threads; });
    }
  }
  if (!failure.ok()) {
    for (OsThread& t : os_threads_) t.Join();
    os_threads_.clear();
    // No scheduler was built, so the process may still form a group.
    if (threads >= 2) g_work_stealing_group_used.store(false);
    return failure;
  }
  threads_ = threads;
  running_ = true;
  return absl::OkStatus();
}

absl::Status FiberRunner::Launch(int count, std::function<void(int)> body) {
  if (!running_) return absl::FailedPreconditionError("fiber runner: not running");
  if (count <= 0) return absl::OkStatus();
  auto batch = std::make_shared<const Batch>(Batch{count, std::move(body)});
  {
    std::lock_guard lock(shared_->live_mu);
    shared_->live += count;
  }
  const int dispatchers = std::min(count, threads_);
  for (int k = 0; k < dispatchers; ++k) shared_->channels[k]->push(batch);
  return absl::OkStatus();
}

absl::Status FiberRunner::Submit(std::function<void()> fn) {
  return Launch(1, [fn = std::move(fn)](int) { fn(); });
}

void FiberRunner::Stop() {
  if (!running_) return;
  running_ = false;
  {
    std::unique_lock lock(shared_->live_mu);
    shared_->live_cv.wait(lock, [this] { return shared_->live == 0; });
  }
  for (auto& channel : shared_->channels) channel->close();
  for (OsThread& t : os_threads_) t.Join();
  os_threads_.clear();
  threads_ = 0;
}

}  // namespace fleetmark::engine
