// Scenario parameters with defaults applied and ranges checked (plan.proto's
// MemoryParams / FanoutParams / LoadParams plus the strategy's threads, stack and
// queue). RunScenarioCase resolves its spec through these first, so a spec outside the
// documented ranges is refused with the field, the allowed range and the value, e.g.
//   "fanout.requests: 1 <= requests <= 100000, got 200000".
// Pure functions; safe from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "fleetmark/v1/result.pb.h"

namespace fleetmark::engine {

// ---- memory (S2) ----
inline constexpr uint32_t kMaxMemoryTasks = 1'000'000;     // per point
inline constexpr int kMaxMemoryPoints = 64;
inline constexpr uint32_t kMaxTouchStackKib = 1u << 20;    // and < the stack size
inline constexpr uint32_t kDefaultMaxMemoryMib = 1024;
inline constexpr uint32_t kMaxMemoryMib = 1u << 20;        // 1 TiB
inline constexpr uint32_t kDefaultPointTimeoutSeconds = 120;
inline constexpr uint32_t kMaxPointTimeoutSeconds = 3600;

struct MemoryConfig {
  std::vector<uint32_t> task_counts;  // default {1, 10, 100, 1000, 10000}
  uint32_t touch_stack_kib = 0;
  uint64_t max_memory_bytes = 0;
  absl::Duration point_timeout;
  // strategy.stack_kib: 0 (default) or 16..1048576 (os_thread.h's range).
  uint32_t stack_kib = 0;             // 0 = the strategy's default
  int threads = 0;                    // carrier threads for fiber/coroutine/event_loop
};

// ---- fanout (S4) ----
inline constexpr uint32_t kMaxFanoutRequests = 100'000;
inline constexpr uint32_t kMaxFanoutCalls = 100'000;
inline constexpr uint64_t kMaxFanoutTotalCalls = 10'000'000;  // requests × calls
inline constexpr uint32_t kMaxFanoutDelayMs = 60'000;
inline constexpr uint32_t kMaxFanoutTimeoutMs = 600'000;

struct FanoutConfig {
  uint32_t requests = 1;        // R
  uint32_t calls = 5;           // D
  absl::Duration delay;         // fixed delay, or the upper bound of the random one
  bool random_delay = false;
  uint64_t seed = 0;
  absl::Duration timeout;       // a call whose delay exceeds this fails (timeout)
  int threads = 0;              // strategy threads (0 = strategy default)
  uint32_t stack_kib = 0;
};

// ---- load (S3) ----
inline constexpr uint32_t kMaxLoadUsers = 100'000;
inline constexpr uint32_t kMaxLoadRampSeconds = 3600;
inline constexpr uint32_t kMaxLoadHoldSeconds = 3600;
inline constexpr uint32_t kMaxLoadThinkMs = 600'000;
inline constexpr uint32_t kMaxLoadObjects = 100'000;
inline constexpr uint32_t kMaxLoadDbWaitUs = 10'000'000;
inline constexpr uint32_t kMaxLoadRequestTimeoutMs = 600'000;
inline constexpr uint32_t kMaxLoadClientThreads = 64;
inline constexpr int kDefaultPoolServerThreads = 100;   // S3's thread pool
inline constexpr int kDefaultPoolServerQueue = 100;     // S3's queue

struct LoadConfig {
  uint32_t users = 1000;
  absl::Duration ramp;
  absl::Duration hold;
  absl::Duration think;
  uint32_t objects = 1000;
  absl::Duration db_wait;
  absl::Duration request_timeout;
  int client_threads = 1;
  int server_threads = 0;       // resolved per server model (fixed_pool: 100, else CPUs)
  int queue_capacity = 100;     // fixed_pool's bounded queue of waiting requests
  uint32_t stack_kib = 0;
};

// Each returns the resolved configuration, or InvalidArgument naming the field
// ("memory.task_counts[2]", "strategy.stack_kib", ...), its range and the value.
// Missing params (the spec's oneof unset) mean all defaults.
absl::StatusOr<MemoryConfig> ResolveMemoryConfig(const v1::CaseSpec& spec);
absl::StatusOr<FanoutConfig> ResolveFanoutConfig(const v1::CaseSpec& spec);
absl::StatusOr<LoadConfig> ResolveLoadConfig(const v1::CaseSpec& spec);

}  // namespace fleetmark::engine
