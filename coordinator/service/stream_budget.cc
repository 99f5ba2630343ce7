#include "coordinator/service/stream_budget.h"

#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace fleetmark::service {
namespace {

constexpr rlim_t kMaxUsefulLimit = 1 << 20;
constexpr int kFixedReserve = 32;
constexpr int kMinRefusalHeadroom = 64;

}  // namespace

absl::StatusOr<DescriptorLimit> RaiseDescriptorLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) {
    return absl::InternalError(absl::StrCat("getrlimit(RLIMIT_NOFILE): ", std::strerror(errno)));
  }
  const rlim_t hard = limit.rlim_max == RLIM_INFINITY ? kMaxUsefulLimit : std::min(limit.rlim_max, kMaxUsefulLimit);
  if (limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur < hard) {
    rlimit raised = limit;
    raised.rlim_cur = hard;
    if (setrlimit(RLIMIT_NOFILE, &raised) != 0) {
      return absl::InternalError(absl::StrCat("setrlimit(RLIMIT_NOFILE, soft ", hard, "): ", std::strerror(errno)));
    }
    limit = raised;
  }
  DescriptorLimit out;
  out.soft = static_cast<int>(std::min(limit.rlim_cur, kMaxUsefulLimit));
  out.hard = static_cast<int>(hard);
  return out;
}

int DescriptorReserve(int limit, int db_pool_size, int http_descriptors) {
  const int headroom = std::max(kMinRefusalHeadroom, limit / 20);
  return headroom + db_pool_size + 1 + http_descriptors + kFixedReserve;
}

int StreamBudget(int limit, int reserve, int max_agent_streams) {
  int budget = std::max(1, limit - reserve);
  if (max_agent_streams > 0) budget = std::min(budget, max_agent_streams);
  return budget;
}

bool StreamSlots::TryAcquire() {
  int held = held_.load(std::memory_order_relaxed);
  while (held < budget_) {
    if (held_.compare_exchange_weak(held, held + 1, std::memory_order_relaxed)) return true;
  }
  return false;
}

void StreamSlots::Release() { held_.fetch_sub(1, std::memory_order_relaxed); }

std::string StreamSlots::RefusalReason() const {
  return absl::StrCat("coordinator at its stream limit ", budget_, " (RLIMIT_NOFILE ", descriptor_limit_, ")");
}

}  // namespace fleetmark::service
