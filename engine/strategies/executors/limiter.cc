#include "engine/strategies/executors/limiter.h"

#include <algorithm>
#include <utility>

#include "engine/strategies/executors/run_guarded.h"

namespace fleetmark::engine {

Limiter::Limiter(Executor* underlying, int max_in_flight)
    : underlying_(underlying), max_in_flight_(std::max(1, max_in_flight)) {}

absl::Status Limiter::Submit(std::function<void()> fn) {
  uint64_t id = 0;
  {
    std::lock_guard lock(mu_);
    id = next_id_++;
    queue_.push_back({id, std::move(fn)});
    if (runners_ >= max_in_flight_) return absl::OkStatus();  // a runner will take it
    ++runners_;
  }
  absl::Status s = underlying_->Submit([this] { RunnerLoop(); });
  if (!s.ok()) {
    std::lock_guard lock(mu_);
    --runners_;
    if (runners_ > 0) return absl::OkStatus();  // the active runners will run it
    std::erase_if(queue_, [id](const Entry& e) { return e.id == id; });
  }
  return s;
}

void Limiter::RunnerLoop() {
  for (;;) {
    std::function<void()> task;
    {
      std::lock_guard lock(mu_);
      if (queue_.empty()) {
        --runners_;  // under the lock, so a concurrent Submit starts a new runner
        return;
      }
      task = std::move(queue_.front().fn);
      queue_.pop_front();
    }
    RunGuarded(task, "a limited task");
  }
}

}  // namespace fleetmark::engine
