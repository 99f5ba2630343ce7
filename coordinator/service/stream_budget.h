// How many agent streams one coordinator process may hold: its descriptor limit
// (RLIMIT_NOFILE) minus a reserve for everything else that needs a descriptor, and the
// counter that admits streams up to that budget at their hello.
//
// Each agent stream is one TCP connection, so one descriptor. At the limit the kernel
// refuses accept4() (EMFILE) and gRPC drops connections at random; instead the
// coordinator refuses a hello over the budget with a retryable Refusal naming the
// limit, so the agent backs off, and streams already held are never dropped.
//
//   FLEETMARK_ASSIGN_OR_RETURN(DescriptorLimit limit, RaiseDescriptorLimit());
//   const int budget = StreamBudget(limit.soft, DescriptorReserve(db_pool, http), max_agent_streams);
//   StreamSlots slots(budget, limit.soft);
//   if (!slots.TryAcquire()) refuse(slots.RefusalReason());   // ... slots.Release() at stream end
//
// Thread-safety: the functions are pure or touch only the process limit (call once, at
// start); StreamSlots is safe from any thread.
#pragma once

#include <atomic>
#include <string>

#include "absl/status/statusor.h"

namespace fleetmark::service {

struct DescriptorLimit {
  int soft = 0;  // RLIMIT_NOFILE soft limit after raising: what the process may open
  int hard = 0;  // RLIMIT_NOFILE hard limit (a soft limit cannot go above it unprivileged)
};

// Raises the soft RLIMIT_NOFILE to the hard limit (capped at 1 << 20: an "unlimited"
// hard limit would make the budget meaningless) and returns both. Internal when
// getrlimit/setrlimit fail (naming errno). Call once at start, before serving.
absl::StatusOr<DescriptorLimit> RaiseDescriptorLimit();

// Descriptors the coordinator needs besides agent streams:
//   - the database pool (`db_pool_size`) and the notification listener (1),
//   - the web view: `http_descriptors`, its database connections plus the client
//     connections it holds at most (http::HttpDescriptors; 0 without a web view),
//   - a fixed 32 for stdio, the logs, both listening sockets, gRPC's epoll set, event
//     and wake-up descriptors, resolver and /proc reads,
//   - headroom for connections accepted only to be refused (agents retrying while the
//     budget is full): max(64, 5 % of `limit`).
// E.g. limit 20 000, pool 8, web view of 8 threads and 256 connections:
// 1 000 + 9 + 264 + 32 = 1 305.
int DescriptorReserve(int limit, int db_pool_size, int http_descriptors);

// Streams to admit: `limit` − `reserve`, at least 1, lowered to `max_agent_streams`
// when that is > 0 and smaller.
int StreamBudget(int limit, int reserve, int max_agent_streams);

// The admission counter of held streams. A stream takes a slot at its hello (before any
// database work) and gives it back when it ends.
class StreamSlots {
 public:
  // `budget` streams (>= 1); `descriptor_limit` is only named in the refusal.
  StreamSlots(int budget, int descriptor_limit) : budget_(budget), descriptor_limit_(descriptor_limit) {}

  // Takes a slot; false (nothing taken) when all `budget` slots are held.
  bool TryAcquire();
  // Gives back a slot taken by TryAcquire.
  void Release();
  int held() const { return held_.load(std::memory_order_relaxed); }
  int budget() const { return budget_; }
  int descriptor_limit() const { return descriptor_limit_; }
  // "coordinator at its stream limit S (RLIMIT_NOFILE M)": the Refusal's reason.
  std::string RefusalReason() const;

 private:
  const int budget_;
  const int descriptor_limit_;
  std::atomic<int> held_{0};
};

}  // namespace fleetmark::service
