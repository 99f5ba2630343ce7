#include "engine/energy/counter_delta.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace fleetmark::engine::energy {

absl::StatusOr<uint64_t> CounterDelta(uint64_t before, uint64_t now, uint64_t max_range) {
  if (max_range > 0 && (before > max_range || now > max_range)) {
    return absl::OutOfRangeError(
        absl::StrCat("energy counter reading ", before > max_range ? before : now, " above its range ", max_range));
  }
  if (now >= before) return now - before;
  if (max_range == 0) {
    return absl::FailedPreconditionError(absl::StrCat("energy counter went back from ", before, " to ", now,
                                                      " and its range is unknown: a wrap cannot be told from a reset"));
  }
  return (max_range - before) + now;
}

}  // namespace fleetmark::engine::energy
