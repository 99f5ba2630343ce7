// Will a scenario fit in this process? Checks made before a memory point, a fanout
// case or a load case starts, so that a request the system cannot grant becomes a
// `resource_exhausted` result with the reason instead of a half-created mess.
//
//   absl::Status fits = CheckThreadsFit(10'000);  // ResourceExhausted("... RLIMIT_NPROC ...")
//
// Linux only; each function reads /proc or getrlimit at call time. Thread-safe.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace fleetmark::engine {

// OK if `extra_threads` more threads can be created by this process, judged by
// RLIMIT_NPROC (soft limit vs this process's threads + extra; other processes of the
// same user also count against it, so this is a necessary condition only),
// /proc/sys/kernel/threads-max and pid_max (vs all threads on the system, from
// /proc/loadavg), and /proc/sys/vm/max_map_count (two mappings per thread stack:
// stack + guard). ResourceExhausted naming the limit, its value and the need otherwise.
absl::Status CheckThreadsFit(int64_t extra_threads);

// OK if `bytes` more memory fits within both MemAvailable (/proc/meminfo) and `cap_bytes`
// (the plan's cap; 0 = none). ResourceExhausted naming which one and both figures.
absl::Status CheckMemoryFits(uint64_t bytes, uint64_t cap_bytes);

// Raises RLIMIT_NOFILE's soft limit to its hard limit and returns the new soft limit.
// Internal (with errno text) if getrlimit/setrlimit fail.
absl::StatusOr<uint64_t> RaiseDescriptorLimit();

}  // namespace fleetmark::engine
