// Allocation counting: process-wide counts of global operator new / delete calls and
// of the bytes requested, for the `allocations` counters of a case.
//
// The counting replacements of every global operator new/delete form (plain, array,
// nothrow, sized, aligned) live in the CMake OBJECT library `fleetmark_alloc_counter`.
// A binary opts in by linking it *directly*:
//     target_link_libraries(fleetmark PRIVATE fleetmark_alloc_counter)
// (an OBJECT library's objects go into the executable itself, so the linker cannot
// drop the replacements the way it drops unreferenced archive members). Binaries that
// do not link it get the standard library's operator new, and
// AllocationCounterActive() returns false; callers then report allocations as
// unknown rather than 0.
//
//   AllocationCounts before = ReadAllocationCounts();
//   RunOnce();
//   uint64_t news = ReadAllocationCounts().allocations - before.allocations;
//
// Counts are relaxed atomics in 16 cache-line-padded shards (a thread picks its shard
// once), so concurrent allocating threads do not all contend on one line; a read sums
// the shards and is therefore not a single instant's snapshot when other threads
// allocate meanwhile. Memory that bypasses operator new (malloc, mmap, thread
// stacks) is not counted.
#pragma once

#include <cstdint>

namespace fleetmark::engine {

struct AllocationCounts {
  uint64_t allocations = 0;      // successful operator new / new[] calls, all forms
  uint64_t allocated_bytes = 0;  // bytes requested by those calls
  uint64_t deallocations = 0;    // operator delete / delete[] calls with a non-null pointer
};

// Sums the counters since process start. Never allocates; thread-safe.
AllocationCounts ReadAllocationCounts();

// True when the counting operator new of `fleetmark_alloc_counter` is linked into this
// process (it registers itself during static initialisation). Thread-safe.
bool AllocationCounterActive();

namespace alloc_counter_internal {
// Used only by the replacements in alloc_counter_new.cc. Never allocate.
void RecordAllocation(uint64_t bytes) noexcept;
void RecordDeallocation() noexcept;
bool MarkActive() noexcept;
}  // namespace alloc_counter_internal

}  // namespace fleetmark::engine
