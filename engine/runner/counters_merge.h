// Internal to engine/runner: merges the counters of a case's slices (one per round)
// into the case's counters.
#pragma once

#include "fleetmark/v1/result.pb.h"

namespace fleetmark::engine {

// Adds `slice` into `total`: CPU times, context switches, RSS deltas and repetitions
// are summed; allocations and bytes per repetition become the repetition-weighted mean;
// peak threads and peak RSS the maximum; peak_rss_reset and allocations_counted hold
// only if they held for every slice. A slice with zero repetitions changes nothing.
void MergeCounters(const v1::Counters& slice, v1::Counters& total);

}  // namespace fleetmark::engine
