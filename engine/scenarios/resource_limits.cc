#include "engine/scenarios/resource_limits.h"

#include <sys/resource.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/measure/process_stats.h"
#include "engine/scenarios/meminfo.h"

namespace fleetmark::engine {
namespace {

// First integer of a one-number /proc file, or -1.
int64_t ReadProcNumber(const char* path) {
  std::ifstream in(path);
  int64_t value = -1;
  if (!(in >> value)) return -1;
  return value;
}

// Threads on the whole system: the denominator of /proc/loadavg's 4th field
// ("running/total" scheduling entities), or -1.
int64_t SystemThreads() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c, entities;
  if (!(in >> a >> b >> c >> entities)) return -1;
  const size_t slash = entities.find('/');
  if (slash == std::string::npos) return -1;
  return std::strtoll(entities.c_str() + slash + 1, nullptr, 10);
}

// "MemAvailable:  123 kB" in bytes, or -1.
int64_t MemAvailableBytes() {
  const std::optional<uint64_t> bytes = ReadMeminfoBytes("MemAvailable:");
  return bytes ? static_cast<int64_t>(*bytes) : -1;
}

}  // namespace

absl::Status CheckThreadsFit(int64_t extra_threads) {
  if (extra_threads <= 0) return absl::OkStatus();
  const absl::StatusOr<int64_t> own = ReadThreadCount();
  const int64_t own_threads = own.ok() ? *own : 1;
  rlimit nproc{};
  if (getrlimit(RLIMIT_NPROC, &nproc) == 0 && nproc.rlim_cur != RLIM_INFINITY &&
      static_cast<uint64_t>(own_threads + extra_threads) > nproc.rlim_cur) {
    return absl::ResourceExhaustedError(
        absl::StrCat("needs ", extra_threads, " more threads (", own_threads + extra_threads,
                     " in this process) but RLIMIT_NPROC allows ", nproc.rlim_cur, " per user (ulimit -u)"));
  }
  const int64_t system = SystemThreads();
  const int64_t threads_max = ReadProcNumber("/proc/sys/kernel/threads-max");
  if (system >= 0 && threads_max > 0 && system + extra_threads > threads_max) {
    return absl::ResourceExhaustedError(absl::StrCat("needs ", extra_threads,
                                                     " more threads but the system already runs ", system,
                                                     " of at most ", threads_max, " (/proc/sys/kernel/threads-max)"));
  }
  const int64_t pid_max = ReadProcNumber("/proc/sys/kernel/pid_max");
  if (system >= 0 && pid_max > 0 && system + extra_threads > pid_max) {
    return absl::ResourceExhaustedError(absl::StrCat("needs ", extra_threads,
                                                     " more threads but the system already runs ", system,
                                                     " of at most ", pid_max, " ids (/proc/sys/kernel/pid_max)"));
  }
  const int64_t max_maps = ReadProcNumber("/proc/sys/vm/max_map_count");
  if (max_maps > 0 && 2 * (own_threads + extra_threads) + 1000 > max_maps) {
    return absl::ResourceExhaustedError(
        absl::StrCat("needs ", extra_threads, " more threads, i.e. about ", 2 * (own_threads + extra_threads) + 1000,
                     " memory mappings (stack + guard each)", " but /proc/sys/vm/max_map_count is ", max_maps));
  }
  return absl::OkStatus();
}

absl::Status CheckMemoryFits(uint64_t bytes, uint64_t cap_bytes) {
  if (cap_bytes != 0 && bytes > cap_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "needs about ", bytes >> 20, " MiB but the plan's cap (memory.max_memory_mib) is ", cap_bytes >> 20, " MiB"));
  }
  const int64_t available = MemAvailableBytes();
  if (available >= 0 && bytes > static_cast<uint64_t>(available)) {
    return absl::ResourceExhaustedError(
        absl::StrCat("needs about ", bytes >> 20, " MiB but MemAvailable is ", available >> 20, " MiB"));
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> RaiseDescriptorLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) {
    return absl::InternalError(absl::StrCat("getrlimit(RLIMIT_NOFILE): ", std::strerror(errno)));
  }
  if (limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &limit) != 0) {
      return absl::InternalError(
          absl::StrCat("setrlimit(RLIMIT_NOFILE, ", limit.rlim_max, "): ", std::strerror(errno)));
    }
  }
  return static_cast<uint64_t>(limit.rlim_cur);
}

}  // namespace fleetmark::engine
