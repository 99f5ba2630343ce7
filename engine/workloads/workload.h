// Workloads: what task i of n does (S1's five actions).
//
// A task is a CPU part (`Compute`) followed by a wait (`Wait`, zero for none). The
// strategy decides how the wait happens (io_mode blocking: park the carrier OS thread;
// suspending: the strategy's own non-blocking timer). Splitting the task this way is
// what lets one workload run on threads, fibres, stackless coroutines and callbacks.
//
//   FLEETMARK_ASSIGN_OR_RETURN(auto w, MakeWorkload("mixed"));
//   uint64_t sink = w->Compute(7);  absl::Duration d = w->Wait(7);
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "fleetmark/v1/plan.pb.h"

namespace fleetmark::engine {

class Workload {
 public:
  virtual ~Workload() = default;
  virtual std::string_view name() const = 0;
  // Runs the CPU part of task `i` (0 <= i < n) and returns a value derived from the
  // result (callers accumulate it so the compiler cannot drop the work). Pure: safe to
  // call from any thread concurrently.
  virtual uint64_t Compute(int i) const = 0;
  // The wait of task `i`: storage 500 + 10·i µs, network i ms, zero for CPU tasks.
  virtual absl::Duration Wait(int i) const = 0;
  // The calibration of a calibrated computation (synthetic: ns per loop iteration in
  // this process); 0 when the workload has none.
  virtual double calibration_ns_per_iteration() const { return 0; }
};

// Returns the workload `name` (one of engine/common/registry.h's kWorkloads) or
// InvalidArgument naming the allowed set. `synthetic` takes `synthetic` (validated
// parameters; the other workloads ignore it).
absl::StatusOr<std::unique_ptr<Workload>> MakeWorkload(std::string_view name,
                                                       const v1::SyntheticParams& synthetic = {});

// The empty task (not a plan workload): Compute returns `i` and does nothing else, no
// wait. What the harness's own cost is calibrated with (engine/runner/batch_slice.h):
// a batch of it through a case's strategy is everything of the case but the task body.
// Thread-safe (stateless).
std::unique_ptr<Workload> MakeEmptyWorkload();

}  // namespace fleetmark::engine
