// Test-only phased workloads: linked into a test executable, a timed repetition hook
// (engine/runner/batch_slice.h) makes every batch case whose strategy label is
// kPhasedLabel take ~100 µs longer per repetition for its first kFastRepetitions timed
// repetitions and ~1 ms longer afterwards (a fast transient, then the settled phase, by
// repetition count: deterministic), and kDriftingLabel cases ever slower (1 ms × 1.1^r
// in repetition r: never settled). Counts restart in each process (one per slice).
#pragma once

namespace fleetmark::testing {

inline constexpr char kPhasedLabel[] = "test_phased";
inline constexpr char kDriftingLabel[] = "test_drifting";
inline constexpr int kFastRepetitions = 60;

}  // namespace fleetmark::testing
