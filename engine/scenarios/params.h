// Scenario parameters with defaults applied and ranges checked (plan.proto's
// MemoryParams / FanoutParams / LoadParams plus the strategy's threads, stack and
// queue). The ranges and defaults are param_rules.h's, which the plan validator
// checks too. RunScenarioCase resolves its spec through these first, so a spec outside the
// documented ranges is refused with the field, the allowed range and the value, e.g.
//   "fanout.requests: 1 <= requests <= 100000, got 200000".
// Pure functions; safe from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engine/scenarios/param_rules.h"
#include "fleetmark/v1/result.pb.h"

namespace fleetmark::engine {

// ---- memory (S2) ----

struct MemoryConfig {
  std::vector<uint32_t> task_counts;  // default {1, 10, 100, 1000, 10000}
  uint32_t touch_stack_kib = 0;
  uint64_t max_memory_bytes = 0;
  absl::Duration point_timeout;
  // strategy.stack_kib: 0 (default) or 16..1048576 (os_thread.h's range).
  uint32_t stack_kib = 0;  // 0 = the strategy's default
  int threads = 0;         // carrier threads for fiber/coroutine/event_loop
};

// ---- fanout (S4) ----

struct FanoutConfig {
  uint32_t requests = 1;  // R
  uint32_t calls = 5;     // D
  absl::Duration delay;   // fixed delay, or the upper bound of the random one
  bool random_delay = false;
  uint64_t seed = 0;
  absl::Duration timeout;  // a call whose delay exceeds this fails (timeout)
  int threads = 0;         // strategy threads (0 = strategy default)
  uint32_t stack_kib = 0;
};

// ---- load (S3) ----
inline constexpr int kDefaultPoolServerThreads = 100;  // S3's thread pool
inline constexpr int kDefaultPoolServerQueue = 100;    // S3's queue

struct LoadConfig {
  uint32_t users = 1000;
  absl::Duration ramp;
  absl::Duration hold;
  absl::Duration think;
  uint32_t objects = 1000;
  absl::Duration db_wait;
  absl::Duration request_timeout;
  int client_threads = 1;
  int server_threads = 0;    // resolved per server model (fixed_pool: 100, else CPUs)
  int queue_capacity = 100;  // fixed_pool's bounded queue of waiting requests
  uint32_t stack_kib = 0;
};

// Each returns the resolved configuration, or InvalidArgument naming the field
// ("memory.task_counts[2]", "strategy.stack_kib", ...), its range and the value.
// Missing params (the spec's oneof unset) mean all defaults.
absl::StatusOr<MemoryConfig> ResolveMemoryConfig(const v1::CaseSpec& spec);
absl::StatusOr<FanoutConfig> ResolveFanoutConfig(const v1::CaseSpec& spec);
absl::StatusOr<LoadConfig> ResolveLoadConfig(const v1::CaseSpec& spec);

}  // namespace fleetmark::engine
