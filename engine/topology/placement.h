// Placement: plan the CPU set of a case on a host, pin the strategy's worker threads to
// it (sched_setaffinity) and verify where tasks actually ran (sched_getcpu samples).
//
//   FLEETMARK_ASSIGN_OR_RETURN(PlacementSpec spec, ParsePlacement(case.placement()));
//   absl::StatusOr<CpuSet> cpus = PlanPlacement(spec, host, threads);
//   if (IsPlacementUnsupported(cpus.status())) -> result status `unsupported`, message
//   PlacementHooks hooks(*cpus);
//   StrategyOptions options{.threads = threads};
//   hooks.Install(options);            // hooks must outlive the strategy
//   ... Start, RunBatch ...
//   if (!hooks.status().ok()) -> `unsupported` with hooks.status().message()
//   result.cpus_used = hooks.CpusSeen();
#pragma once

#include <sched.h>

#include <array>
#include <atomic>
#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "engine/strategies/strategy.h"
#include "engine/topology/placement_spec.h"
#include "fleetmark/v1/host.pb.h"

namespace fleetmark::engine {

// Returns the CPUs a case with `threads` worker threads (0 = unknown, treated as the
// host's logical CPU count) may run on, ascending, always among the CPUs this process
// may use (HostInfo.limits.allowed_cpu_ids: affinity, cgroup cpuset, online; when the
// host does not list them, the host's CPUs):
//   any          -> {} (empty = no restriction: nothing is pinned)
//   class:<name> -> the allowed CPUs of HostInfo.core_classes[name]
//   one_per_core -> the first allowed CPU of every physical core (HostInfo.cores)
//   smt_pairs    -> the allowed CPUs of the first cores with >= 2 allowed hardware
//                   threads covering `threads` (lowest CPU ids first), at least one core
//   cpus:<list>  -> the list
// An error with the engine's status code for "the device cannot honour it" (the one
// CaseStatusFor reports as the case status `unsupported`), saying why, when the class
// does not exist on the host or none of its CPUs is allowed, no core has 2 allowed
// hardware threads (smt_pairs), a listed CPU is not one of the host's or not allowed,
// or no core has an allowed CPU (one_per_core). Pure function; thread-safe.
absl::StatusOr<CpuSet> PlanPlacement(const PlacementSpec& spec, const v1::HostInfo& host, int threads);

// True for the errors PlanPlacement, PlacementHooks::status() and
// ScopedThreadAffinity::status() use for "this device cannot honour the placement"
// (Unimplemented); the runner reports those as CASE_STATUS_UNSUPPORTED with the message.
bool IsPlacementUnsupported(const absl::Status& status);

// Applies a planned CpuSet to threads and records the CPUs tasks ran on.
// All methods are thread-safe; OnTaskStart is lock-free (one atomic OR).
class PlacementHooks {
 public:
  // `cpus` empty = placement `any`: threads get the affinity the process started with
  // (undoing pins that reused threads, such as oneTBB's global workers, kept from an
  // earlier case); failures to do so are ignored.
  explicit PlacementHooks(CpuSet cpus);
  PlacementHooks(const PlacementHooks&) = delete;
  PlacementHooks& operator=(const PlacementHooks&) = delete;

  // Pins the calling thread to the CPU set (sched_setaffinity(0, ...)). A failure
  // (EPERM as on some Android builds, EINVAL when no listed CPU is online or allowed by
  // the cgroup) is recorded: status() then returns Unimplemented naming the errno and
  // the CPU list. Never throws.
  void OnThreadStart();

  // Records sched_getcpu() of the calling thread. Lock-free.
  void OnTaskStart(int task);

  // Sets options.on_thread_start (always) and, when the placement pins (`cpus`
  // non-empty), options.on_task_start to call this object (after any hook already
  // there). Placement `any` gets no per-task hook, so its CpusSeen() stays empty.
  // `*this` must outlive every thread the strategy runs.
  void Install(StrategyOptions& options);

  // CPUs seen by OnTaskStart since construction or ResetSeen, ascending.
  CpuSet CpusSeen() const;
  void ResetSeen();

  // OK, or the first pinning failure.
  absl::Status status() const;
  // Number of threads pinned successfully.
  int threads_pinned() const { return pinned_.load(std::memory_order_relaxed); }
  const CpuSet& cpus() const { return cpus_; }

 private:
  static constexpr int kWords = kMaxCpuId / 64;
  CpuSet cpus_;
  cpu_set_t mask_;
  std::array<std::atomic<uint64_t>, kWords> seen_{};
  std::atomic<int> pinned_{0};
  std::atomic<bool> failed_{false};
  mutable absl::Mutex mu_;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
};

// Pins the calling thread to `cpus` for its lifetime and restores the previous affinity
// on destruction (for the `direct` strategy, whose tasks run on the caller). status()
// says whether pinning worked (same codes as PlacementHooks). Use on one thread only.
class ScopedThreadAffinity {
 public:
  explicit ScopedThreadAffinity(const CpuSet& cpus);
  ~ScopedThreadAffinity();
  ScopedThreadAffinity(const ScopedThreadAffinity&) = delete;
  ScopedThreadAffinity& operator=(const ScopedThreadAffinity&) = delete;
  const absl::Status& status() const { return status_; }

 private:
  cpu_set_t saved_;
  bool restore_ = false;
  absl::Status status_;
};

}  // namespace fleetmark::engine
