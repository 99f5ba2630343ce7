// Process resource readings for a case's counters: getrusage(RUSAGE_SELF) CPU time and
// context switches, thread count and RSS from /proc/self, and the peak RSS (VmHWM)
// after resetting it. Linux only; each reader says what it returns elsewhere.
//
//   FLEETMARK_ASSIGN_OR_RETURN(ResourceUsage before, ReadResourceUsage());
//   RunOnce();
//   FLEETMARK_ASSIGN_OR_RETURN(ResourceUsage after, ReadResourceUsage());
//   ResourceUsage used = after - before;
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace fleetmark::engine {

// CPU time and context switches of the whole process (all its threads, including
// threads that already exited), from getrusage(RUSAGE_SELF); or of the calling thread
// only, from getrusage(RUSAGE_THREAD).
struct ResourceUsage {
  absl::Duration user_cpu;
  absl::Duration system_cpu;
  int64_t voluntary_context_switches = 0;    // ru_nvcsw
  int64_t involuntary_context_switches = 0;  // ru_nivcsw
};
ResourceUsage operator-(const ResourceUsage& a, const ResourceUsage& b);
ResourceUsage operator+(const ResourceUsage& a, const ResourceUsage& b);

// Internal error (with errno text) if getrusage fails. Thread-safe.
absl::StatusOr<ResourceUsage> ReadResourceUsage();
absl::StatusOr<ResourceUsage> ReadThreadResourceUsage();

// Lines of /proc/self/status. Thread-safe; allocates (do not call from operator new).
struct ProcessStatus {
  int64_t threads = 0;          // "Threads:"
  uint64_t rss_bytes = 0;       // "VmRSS:"
  uint64_t peak_rss_bytes = 0;  // "VmHWM:" (high-water mark since start or last reset)
};
// NotFound / Internal naming the file or line when /proc/self/status is missing or
// lacks a field.
absl::StatusOr<ProcessStatus> ReadProcessStatus();

// Current RSS in bytes from /proc/self/statm (resident pages × page size): cheaper
// than ReadProcessStatus. Thread-safe.
absl::StatusOr<uint64_t> ReadRssBytes();

// Current number of threads of this process from /proc/self/stat (field 20,
// num_threads), or from /proc/self/status's "Threads:" line where stat says 0
// (qemu-user fakes /proc/self/stat; there the count is the emulator process's: the
// guest's threads plus the emulator's own). Thread-safe; does not allocate.
absl::StatusOr<int64_t> ReadThreadCount();

// The thread count from the texts of /proc/<pid>/stat and /proc/<pid>/status: stat's
// num_threads, or status's Threads line where stat's is 0 (qemu-user); <= 0 if
// neither has one. Does not allocate; thread-safe.
int64_t ThreadCountFromProc(const char* stat, const char* status);

// Parses the "Threads:" line of /proc/<pid>/status text (NUL-terminated, the line not
// first); -1 if there is none. Does not allocate; thread-safe.
int64_t ParseStatusThreadCount(const char* status);

// Parses num_threads (field 20) from the text of /proc/<pid>/stat (NUL-terminated);
// -1 if it is malformed. Handles a command name with spaces or parentheses. Does not
// allocate; thread-safe.
int64_t ParseStatThreadCount(const char* stat);

// Resets the kernel's peak-RSS mark (VmHWM) to the current RSS by writing "5" to
// /proc/self/clear_refs (Linux >= 4.0). Returns FailedPrecondition / PermissionDenied
// (with the errno text) where the kernel or a sandbox refuses, e.g. gVisor, old
// kernels, or a read-only /proc; VmHWM is then the peak since process start and
// callers must say so. Thread-safe (but it resets a process-wide value).
absl::Status ResetPeakRss();

}  // namespace fleetmark::engine
