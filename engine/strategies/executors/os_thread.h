// OsThread: one joinable POSIX thread created with an explicit stack size.
//
// std::thread cannot choose a stack size, and reports creation failure by throwing;
// the executors and scenarios need both (the memory scenario sets `stack_kib`, and a
// thread that cannot be created is a result, not a crash). StartThread wraps
// pthread_create and maps its errors to absl::Status.
//
//   FLEETMARK_ASSIGN_OR_RETURN(OsThread t, StartThread(256, [] { Work(); }));
//   t.Join();
#pragma once

#include <pthread.h>

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/strategies/limits.h"

namespace fleetmark::engine {

// Returns OK if `stack_kib` is 0 or within [kMinStackKib, kMaxStackKib] (limits.h), else
// InvalidArgument naming `field` (e.g. "stack_kib"), the value and the range.
absl::Status ValidateStackKib(int stack_kib, std::string_view field = "stack_kib");

// Logical CPUs this process may use: min(CPUs it may run on (sched_getaffinity), the
// cgroup CPU quota rounded up) -- engine/topology/cpu_limits.h. Always >= 1. Thread-safe.
int LogicalCpuCount();

// A started, joinable OS thread. Move-only. Destroying a still-joinable OsThread joins
// it (never detaches, never terminates). Not thread-safe: one owner calls Join.
class OsThread {
 public:
  OsThread() = default;
  OsThread(OsThread&& other) noexcept;
  OsThread& operator=(OsThread&& other) noexcept;
  OsThread(const OsThread&) = delete;
  OsThread& operator=(const OsThread&) = delete;
  ~OsThread();

  bool joinable() const { return started_; }
  // Waits for the thread to finish. No-op if not joinable.
  void Join();

 private:
  friend absl::StatusOr<OsThread> StartThread(int stack_kib, std::function<void()> fn, std::string_view name);
  pthread_t handle_{};
  bool started_ = false;
};

// Starts a thread running `fn` with a stack of `stack_kib` KiB (0 = system default)
// and, if `name` is not empty, that thread name (truncated to 15 bytes, for `top -H`
// and debuggers). The stack is at least `stack_kib` (glibc may reuse a cached stack of
// up to 4x that size; untouched pages cost no RSS). Errors: InvalidArgument for a bad `stack_kib` or empty `fn`;
// ResourceExhausted when the system refuses another thread or its stack (EAGAIN,
// ENOMEM: thread limit, RLIMIT_NPROC, address-space limit); Internal otherwise.
// Exceptions escaping `fn` are caught and logged to stderr (never std::terminate).
// Thread-safe.
absl::StatusOr<OsThread> StartThread(int stack_kib, std::function<void()> fn, std::string_view name = "");

}  // namespace fleetmark::engine
