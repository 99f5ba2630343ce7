// Child processes: run a piece of work in a fresh copy of the current executable.
//
// Used for what cannot share a process with other cases (Boost.Fiber's work-stealing
// scheduler is one per process) or may exhaust it (memory, fanout): the parent
// posix_spawns `/proc/self/exe __fleetmark_child <kind>`, writes the request bytes to
// the child's stdin and reads the response bytes from its stdout. In the child,
// MaybeRunChild (called first in every main that links the runner) finds the handler
// registered for <kind>, runs it and exits. A child killed by a signal, crashing or
// timing out becomes a Status in the parent, never a crash of the parent.
//
// Registering a handler (in the .cc that also defines a function the binary calls,
// since static libraries drop object files nothing references):
//   const ChildHandlerRegistration kRegistration(
//       "memory_point", [](std::string_view request) -> absl::StatusOr<std::string> {...});
// Running it:
//   FLEETMARK_ASSIGN_OR_RETURN(std::string response,
//       RunInChild("memory_point", request, {.timeout = absl::Seconds(60)}));
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engine/common/clock.h"

namespace fleetmark::engine {

// The hidden first argument that puts an executable into child mode.
inline constexpr std::string_view kChildArgument = "__fleetmark_child";

// Runs in the child: takes the request bytes, returns the response bytes or an error
// (its code and message travel back to the parent). May throw std::bad_alloc (reported
// as ResourceExhausted).
using ChildHandler = std::function<absl::StatusOr<std::string>(std::string_view request)>;

// Environment variable naming an emulator that child processes must run under:
// an agent under user-mode emulation (qemu-user) where the kernel has no binfmt_misc
// handler for the binary's architecture (a chroot or a container) cannot exec itself,
// so it runs `$FLEETMARK_CHILD_EMULATOR BINARY __fleetmark_child KIND` instead.
// Unset or empty (the normal case, and on real devices) = exec the binary directly.
inline constexpr char kChildEmulatorVariable[] = "FLEETMARK_CHILD_EMULATOR";

// Checks $FLEETMARK_CHILD_EMULATOR: OK when unset or empty, or when it names an
// executable regular file (a value with a '/' as given, a bare name looked up on
// $PATH). Otherwise InvalidArgument naming the variable and its value. Mains that
// serve children call it at start-up and refuse to run (exit 2) on an error, so a
// wrong value is not one failed case per case. Thread-safe (reads the environment).
absl::Status CheckChildEmulator();

// The command line that starts `executable` as a child ("/proc/self/exe" resolved to
// the binary's path when an emulator is named): {executable}, or {emulator, binary}
// with a bare emulator name resolved on $PATH.
std::vector<std::string> ChildCommand(const std::string& executable);

// Registers `handler` for `kind` (process-wide; thread-safe). A second registration of
// the same kind replaces the first. Usually done by a namespace-scope
// ChildHandlerRegistration object.
void RegisterChildHandler(std::string kind, ChildHandler handler);

struct ChildHandlerRegistration {
  ChildHandlerRegistration(std::string kind, ChildHandler handler) {
    RegisterChildHandler(std::move(kind), std::move(handler));
  }
};

struct ChildOptions {
  // Executable to spawn; "" = /proc/self/exe (this binary). It must call MaybeRunChild.
  std::string executable;
  // Time limit (on `clock`'s steady time: a wall-clock step neither kills a healthy
  // child nor spares a hung one); past it the child is killed (SIGKILL) and the call
  // returns DeadlineExceeded. absl::InfiniteDuration() = none.
  absl::Duration timeout = absl::Minutes(10);
  // Not owned; null = SystemClock() (engine/common/clock.h).
  const Clock* clock = nullptr;
  // Polled every ~20 ms; when true the child is killed and Cancelled is returned.
  // May be null.
  const std::atomic<bool>* cancelled = nullptr;
};

// Spawns a child for `kind`, sends `request`, waits for it to exit and returns its
// response. Errors: the handler's own status (same code and message); ResourceExhausted
// if the child was killed by the kernel's out-of-memory killer (SIGKILL while the OOM-kill
// count rose; oom_kills.h) or ran out of memory, or if the process could not be spawned
// for lack of resources; Internal if it crashed (other signals), was killed by SIGKILL
// from outside (a `kill -9`: the OOM-kill count did not move) or broke the protocol; DeadlineExceeded on timeout;
// Cancelled. Error messages include the tail of the child's stderr. Thread-safe: several children may run at once from
// different threads.
absl::StatusOr<std::string> RunInChild(std::string_view kind, std::string_view request,
                                       const ChildOptions& options = {});

// Call first in main(). If argv[1] is kChildArgument, runs the handler named by
// argv[2] on stdin's bytes, writes the response to stdout and exits the process
// (exit code 0 = success, 3 = handler error, 4 = unknown kind or bad arguments).
// Otherwise returns without doing anything.
void MaybeRunChild(int argc, char** argv);

}  // namespace fleetmark::engine
