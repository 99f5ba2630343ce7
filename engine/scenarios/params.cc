#include "engine/scenarios/params.h"

#include <string_view>

#include "absl/strings/str_cat.h"
#include "engine/common/status_macros.h"
#include "engine/strategies/executors/os_thread.h"

namespace fleetmark::engine {
namespace {

// "field: lo <= name <= hi, got v" (STYLE.md's error shape).
absl::Status CheckRange(const std::string& field, uint64_t value, uint64_t lo, uint64_t hi) {
  if (value >= lo && value <= hi) return absl::OkStatus();
  std::string name = field.substr(field.rfind('.') + 1);
  if (const size_t bracket = name.find('['); bracket != std::string::npos) {
    name = name.substr(0, bracket);
  }
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": ", lo, " <= ", name, " <= ", hi, ", got ", value));
}

// The value, or `fallback` when the proto field holds its "use the default" zero.
uint32_t OrDefault(uint32_t value, uint32_t fallback) { return value == 0 ? fallback : value; }

absl::Status CheckStrategy(const v1::StrategySpec& strategy) {
  FLEETMARK_RETURN_IF_ERROR(CheckRange("strategy.threads", strategy.threads(), 0, 10'000));
  if (strategy.stack_kib() > static_cast<uint32_t>(kMaxStackKib)) {
    return CheckRange("strategy.stack_kib", strategy.stack_kib(), kMinStackKib, kMaxStackKib);
  }
  return ValidateStackKib(static_cast<int>(strategy.stack_kib()), "strategy.stack_kib");
}

}  // namespace

absl::StatusOr<MemoryConfig> ResolveMemoryConfig(const v1::CaseSpec& spec) {
  FLEETMARK_RETURN_IF_ERROR(CheckStrategy(spec.strategy()));
  const v1::MemoryParams& p = spec.memory();
  MemoryConfig config;
  if (p.task_counts().empty()) {
    config.task_counts = {1, 10, 100, 1000, 10000};
  } else {
    FLEETMARK_RETURN_IF_ERROR(CheckRange("memory.task_counts", p.task_counts_size(), 1,
                                         kMaxMemoryPoints));
    for (int i = 0; i < p.task_counts_size(); ++i) {
      FLEETMARK_RETURN_IF_ERROR(CheckRange(absl::StrCat("memory.task_counts[", i, "]"),
                                           p.task_counts(i), 1, kMaxMemoryTasks));
      config.task_counts.push_back(p.task_counts(i));
    }
  }
  config.stack_kib = spec.strategy().stack_kib();
  FLEETMARK_RETURN_IF_ERROR(
      CheckRange("memory.touch_stack_kib", p.touch_stack_kib(), 0, kMaxTouchStackKib));
  if (config.stack_kib != 0 && p.touch_stack_kib() + 8 > config.stack_kib) {
    // 8 KiB stay free for the task's own frames and the guard page's neighbourhood.
    return absl::InvalidArgumentError(absl::StrCat(
        "memory.touch_stack_kib: 0 <= touch_stack_kib <= strategy.stack_kib - 8 = ",
        config.stack_kib - 8, ", got ", p.touch_stack_kib()));
  }
  config.touch_stack_kib = p.touch_stack_kib();
  const uint32_t mib = OrDefault(p.max_memory_mib(), kDefaultMaxMemoryMib);
  FLEETMARK_RETURN_IF_ERROR(CheckRange("memory.max_memory_mib", mib, 1, kMaxMemoryMib));
  config.max_memory_bytes = uint64_t{mib} << 20;
  const uint32_t timeout_s = OrDefault(p.point_timeout_seconds(), kDefaultPointTimeoutSeconds);
  FLEETMARK_RETURN_IF_ERROR(CheckRange("memory.point_timeout_seconds", timeout_s, 1,
                                       kMaxPointTimeoutSeconds));
  config.point_timeout = absl::Seconds(timeout_s);
  config.threads = static_cast<int>(spec.strategy().threads());
  return config;
}

absl::StatusOr<FanoutConfig> ResolveFanoutConfig(const v1::CaseSpec& spec) {
  FLEETMARK_RETURN_IF_ERROR(CheckStrategy(spec.strategy()));
  const v1::FanoutParams& p = spec.fanout();
  FanoutConfig config;
  config.requests = OrDefault(p.requests(), 1);
  config.calls = OrDefault(p.calls_per_request(), 5);
  FLEETMARK_RETURN_IF_ERROR(
      CheckRange("fanout.requests", config.requests, 1, kMaxFanoutRequests));
  FLEETMARK_RETURN_IF_ERROR(
      CheckRange("fanout.calls_per_request", config.calls, 1, kMaxFanoutCalls));
  const uint64_t total = uint64_t{config.requests} * config.calls;
  if (total > kMaxFanoutTotalCalls) {
    return absl::InvalidArgumentError(
        absl::StrCat("fanout.requests * fanout.calls_per_request: at most ",
                     kMaxFanoutTotalCalls, " calls, got ", total));
  }
  const uint32_t delay_ms = OrDefault(p.delay_ms(), 500);
  FLEETMARK_RETURN_IF_ERROR(CheckRange("fanout.delay_ms", delay_ms, 1, kMaxFanoutDelayMs));
  const uint32_t timeout_ms = OrDefault(p.timeout_ms(), 3000);
  FLEETMARK_RETURN_IF_ERROR(
      CheckRange("fanout.timeout_ms", timeout_ms, 1, kMaxFanoutTimeoutMs));
  config.delay = absl::Milliseconds(delay_ms);
  config.timeout = absl::Milliseconds(timeout_ms);
  config.random_delay = p.random_delay();
  config.seed = p.seed();
  config.threads = static_cast<int>(spec.strategy().threads());
  config.stack_kib = spec.strategy().stack_kib();
  return config;
}

absl::StatusOr<LoadConfig> ResolveLoadConfig(const v1::CaseSpec& spec) {
  FLEETMARK_RETURN_IF_ERROR(CheckStrategy(spec.strategy()));
  const v1::LoadParams& p = spec.load();
  LoadConfig config;
  config.users = OrDefault(p.users(), 1000);
  FLEETMARK_RETURN_IF_ERROR(CheckRange("load.users", config.users, 1, kMaxLoadUsers));
  const uint32_t ramp_s = OrDefault(p.ramp_seconds(), 5);
  FLEETMARK_RETURN_IF_ERROR(CheckRange("load.ramp_seconds", ramp_s, 1, kMaxLoadRampSeconds));
  const uint32_t hold_s = OrDefault(p.hold_seconds(), 15);
  FLEETMARK_RETURN_IF_ERROR(CheckRange("load.hold_seconds", hold_s, 1, kMaxLoadHoldSeconds));
  const uint32_t think_ms = OrDefault(p.think_ms(), 500);
  FLEETMARK_RETURN_IF_ERROR(CheckRange("load.think_ms", think_ms, 1, kMaxLoadThinkMs));
  config.objects = OrDefault(p.objects(), 1000);
  FLEETMARK_RETURN_IF_ERROR(CheckRange("load.objects", config.objects, 1, kMaxLoadObjects));
  const uint32_t db_us = OrDefault(p.db_wait_us(), 1000);
  FLEETMARK_RETURN_IF_ERROR(CheckRange("load.db_wait_us", db_us, 1, kMaxLoadDbWaitUs));
  const uint32_t timeout_ms = OrDefault(p.request_timeout_ms(), 10'000);
  FLEETMARK_RETURN_IF_ERROR(CheckRange("load.request_timeout_ms", timeout_ms, 1,
                                       kMaxLoadRequestTimeoutMs));
  const uint32_t clients = OrDefault(p.client_threads(), 1);
  FLEETMARK_RETURN_IF_ERROR(
      CheckRange("load.client_threads", clients, 1, kMaxLoadClientThreads));
  config.ramp = absl::Seconds(ramp_s);
  config.hold = absl::Seconds(hold_s);
  config.think = absl::Milliseconds(think_ms);
  config.db_wait = absl::Microseconds(db_us);
  config.request_timeout = absl::Milliseconds(timeout_ms);
  config.client_threads = static_cast<int>(clients);
  const std::string& name = spec.strategy().name();
  const int threads = static_cast<int>(spec.strategy().threads());
  config.server_threads =
      threads != 0 ? threads : (name == "fixed_pool" ? kDefaultPoolServerThreads : LogicalCpuCount());
  const uint32_t queue = OrDefault(spec.strategy().limit(), kDefaultPoolServerQueue);
  FLEETMARK_RETURN_IF_ERROR(CheckRange("strategy.limit", queue, 1, 1'000'000));
  config.queue_capacity = static_cast<int>(queue);
  config.stack_kib = spec.strategy().stack_kib();
  return config;
}

}  // namespace fleetmark::engine
