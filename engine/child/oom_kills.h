// Telling the kernel's out-of-memory killer from any other SIGKILL of a child: a child
// killed by SIGKILL ran out of memory only if the kernel's OOM-kill count rose while it
// ran (a `kill -9` by hand, or by a supervisor, is a failure, not an answer).
//
//   std::optional<uint64_t> before = ReadOomKillCount();
//   ... the child is killed by SIGKILL ...
//   absl::Status why = SigkillStatus("batch_slice", before, ReadOomKillCount(), tail);
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/status.h"

namespace fleetmark::engine {

// The `oom_kill` line of `vmstat_path` (/proc/vmstat: every OOM kill since boot, of the
// system's and of memory cgroups' OOM killers; Linux ≥ 4.13). nullopt when the file or
// the line cannot be read (older kernels, a sandbox that hides it). Thread-safe.
std::optional<uint64_t> ReadOomKillCount(const std::string& vmstat_path = "/proc/vmstat");

// The status of a child `kind` killed by SIGKILL, from the OOM-kill counts read before
// it started and after it was reaped: ResourceExhausted ("killed by the kernel's
// out-of-memory killer") when the count rose; Internal ("killed by SIGKILL from outside
// ... not the out-of-memory killer") when both are known and equal; ResourceExhausted
// naming both possible causes when either is unknown. `stderr_tail` is appended as is.
absl::Status SigkillStatus(absl::string_view kind, std::optional<uint64_t> before, std::optional<uint64_t> after,
                           absl::string_view stderr_tail);

}  // namespace fleetmark::engine
