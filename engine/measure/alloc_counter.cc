#include "engine/measure/alloc_counter.h"

#include <atomic>
#include <cstddef>

namespace fleetmark::engine {
namespace {

// Shards of the counters, each on its own cache line so that threads allocating
// concurrently mostly touch different lines.
constexpr int kShards = 16;
constexpr size_t kCacheLine = 64;

struct alignas(kCacheLine) Shard {
  std::atomic<uint64_t> allocations{0};
  std::atomic<uint64_t> bytes{0};
  std::atomic<uint64_t> deallocations{0};
};

// Constant-initialised (no constructor runs), so operator new called during other
// translation units' static initialisation already finds valid counters.
constinit Shard shards[kShards];
constinit std::atomic<bool> active{false};
constinit std::atomic<unsigned> next_shard{0};

// The calling thread's shard, chosen round-robin at its first allocation. A
// constant-initialised thread_local of trivial type needs no TLS constructor call
// and never allocates (the executable's static TLS block holds it).
Shard& ThisThreadShard() noexcept {
  constinit thread_local int shard = -1;
  if (shard < 0) {
    shard = static_cast<int>(next_shard.fetch_add(1, std::memory_order_relaxed) % kShards);
  }
  return shards[shard];
}

}  // namespace

AllocationCounts ReadAllocationCounts() {
  AllocationCounts counts;
  for (const Shard& s : shards) {
    counts.allocations += s.allocations.load(std::memory_order_relaxed);
    counts.allocated_bytes += s.bytes.load(std::memory_order_relaxed);
    counts.deallocations += s.deallocations.load(std::memory_order_relaxed);
  }
  return counts;
}

bool AllocationCounterActive() { return active.load(std::memory_order_relaxed); }

namespace alloc_counter_internal {

void RecordAllocation(uint64_t bytes) noexcept {
  Shard& s = ThisThreadShard();
  s.allocations.fetch_add(1, std::memory_order_relaxed);
  s.bytes.fetch_add(bytes, std::memory_order_relaxed);
}

void RecordDeallocation() noexcept { ThisThreadShard().deallocations.fetch_add(1, std::memory_order_relaxed); }

bool MarkActive() noexcept {
  active.store(true, std::memory_order_relaxed);
  return true;
}

}  // namespace alloc_counter_internal
}  // namespace fleetmark::engine
