// The increase of a cumulative energy counter between two readings, with wrap-around.
// A RAPL energy_uj runs 0..max_energy_range_uj and restarts at 0; a reading below the
// previous one has wrapped once: (max_range - before) + now. Two wraps between readings
// cannot be seen, so a reader samples at least once per max_range / peak power (RAPL's
// 262143328850 µJ at 200 W: every 21 min; a 65.5 kJ range at 250 W: every 4 min).
// The kernel's max_energy_range_uj is the counter's last value, not its period, so each
// wrap undercounts one hardware energy unit (at most 61 µJ): below the resolution.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"

namespace fleetmark::engine::energy {

// The increase from `before` to `now`, in the counter's units. `max_range` 0 = unknown.
// Errors: OutOfRange when a reading exceeds a known max_range; FailedPrecondition when
// `now` < `before` and max_range is unknown (a wrap cannot be told from a reset). Pure.
absl::StatusOr<uint64_t> CounterDelta(uint64_t before, uint64_t now, uint64_t max_range);

}  // namespace fleetmark::engine::energy
