// Internal to engine/runner: measures one slice of a batch case — build the strategy
// (untimed unless include_setup), time-based warm-up, then timed repetitions until the
// slice's quota or the case's CI target — with counters and placement hooks around it.
#pragma once

#include <atomic>
#include <string>

#include "absl/time/time.h"
#include "engine/runner/slice.pb.h"

namespace fleetmark::engine {

// The child-process kind (engine/runner/child.h) that runs RunBatchSlice.
inline constexpr char kBatchSliceChildKind[] = "runner.batch_slice";

// Runs the slice in this process. Never fails: problems are the response's status
// (UNSUPPORTED for an unsupported io mode or placement, RESOURCE_EXHAUSTED, FAILED,
// CANCELLED when `*cancelled` turns true; may be null). Not reentrant with other
// measurements in the process (counters are process-wide).
runner::SliceResponse RunBatchSlice(const runner::SliceRequest& request,
                                    const std::atomic<bool>* cancelled);

// Runs the slice in a child process (for strategies that need a process of their own,
// such as fiber). Child failures become statuses: killed by SIGKILL ->
// RESOURCE_EXHAUSTED, crash -> FAILED, over `timeout` -> TIMEOUT.
runner::SliceResponse RunBatchSliceInChild(const runner::SliceRequest& request,
                                           const std::string& executable,
                                           absl::Duration timeout,
                                           const std::atomic<bool>* cancelled);

// True for the strategies whose cases must run in a child process: Boost.Fiber's
// work-stealing scheduler keeps process-wide state and can exist once per process.
bool NeedsChildProcess(const v1::CaseSpec& spec);

}  // namespace fleetmark::engine
