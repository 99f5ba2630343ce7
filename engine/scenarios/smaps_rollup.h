// Process memory as the kernel accounts it per mapping, summed: RSS, PSS (shared pages
// divided among the processes sharing them) and USS (pages private to this process),
// from /proc/self/smaps_rollup (Linux >= 4.14), with VmRSS as the fallback; and the
// system's kernel stacks, the part of a thread's cost that RSS does not show.
//
//   FLEETMARK_ASSIGN_OR_RETURN(MemoryFootprint m, ReadMemoryFootprint());
#pragma once

#include <cstdint>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"

namespace fleetmark::engine {

struct MemoryFootprint {
  uint64_t rss_bytes = 0;
  uint64_t pss_bytes = 0;   // 0 when smaps_rollup is missing
  uint64_t uss_bytes = 0;   // Private_Clean + Private_Dirty; 0 when missing
  bool has_rollup = false;  // PSS/USS are valid
};

// Parses the text of a smaps_rollup file ("Rss:  1234 kB" lines). InvalidArgument if
// it has no Rss line. Pure.
absl::StatusOr<MemoryFootprint> ParseSmapsRollup(absl::string_view text);

// The system's kernel stack memory (/proc/meminfo "KernelStack:"), bytes. Every OS
// thread has one (16 KiB on x86-64); it is not part of any process's RSS. Internal if
// the line is missing. Thread-safe.
absl::StatusOr<uint64_t> ReadKernelStackBytes();

// Reads /proc/self/smaps_rollup; where it is missing, RSS from /proc/self/statm and
// has_rollup = false. Internal if neither can be read. Thread-safe; allocates.
absl::StatusOr<MemoryFootprint> ReadMemoryFootprint();

}  // namespace fleetmark::engine
