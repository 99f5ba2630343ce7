// Internal to engine/runner: measures one slice of a batch case — build the strategy
// (untimed unless include_setup), time-based warm-up, then timed repetitions until the
// slice's quota or its own median's CI target (one slice is one process of the case) —
// with counters and placement hooks around it.
#pragma once

#include <atomic>
#include <string>

#include "absl/time/time.h"
#include "engine/runner/slice.pb.h"

namespace fleetmark::engine {

// The child-process kind (engine/child/child.h) that runs RunBatchSlice.
inline constexpr char kBatchSliceChildKind[] = "runner.batch_slice";

// Runs the slice in this process. Never fails: problems are the response's status
// (UNSUPPORTED for an unsupported io mode or placement, RESOURCE_EXHAUSTED, FAILED,
// CANCELLED when `*cancelled` turns true; may be null). Not reentrant with other
// measurements in the process (counters are process-wide).
runner::SliceResponse RunBatchSlice(const runner::SliceRequest& request, const std::atomic<bool>* cancelled);

// Runs the slice in a child process: what runs there can always be abandoned (a hung
// repetition, Boost.Fiber's once-per-process scheduler, a strategy that corrupts the
// process). Child failures become statuses: killed by the OOM killer -> RESOURCE_EXHAUSTED,
// killed by SIGKILL from outside -> FAILED,
// crash -> FAILED, over `timeout` -> TIMEOUT (the child is killed), `*cancelled`
// (polled every ~20 ms) -> CANCELLED (the child is killed). Returns only once the
// child has exited and been reaped, so nothing of the slice runs on afterwards.
runner::SliceResponse RunBatchSliceInChild(const runner::SliceRequest& request, const std::string& executable,
                                           absl::Duration timeout, const std::atomic<bool>* cancelled);

// TEST HOOK, for test executables only (production binaries never call it): `hook`
// runs in the process measuring a slice before every repetition (warm-up and timed)
// with the case's spec; a hook that never returns is a hung repetition. Set it during
// static initialisation (a namespace-scope object in a test-only source file), before
// main starts any slice; nullptr removes it. Not thread-safe.
using RepetitionHook = void (*)(const v1::CaseSpec& spec);
void SetRepetitionHookForTesting(RepetitionHook hook);

// TEST HOOK, same rules: `hook` runs inside the timed span of every timed repetition
// (its time is the repetition's), e.g. a test workload phase that changes by count.
void SetTimedRepetitionHookForTesting(RepetitionHook hook);

}  // namespace fleetmark::engine
