// How long results are kept: the DURATION of `fleetmark results prune --older_than`
// (and of PruneResultsRequest.older_than_seconds). The CLI checks it before connecting,
// the coordinator again before pruning: one rule for both.
//
//   absl::StatusOr<absl::Duration> keep = ParseRetention("--older_than", "400d");
//
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace fleetmark::service {

inline constexpr absl::Duration kMinRetention = absl::Hours(1);
inline constexpr absl::Duration kMaxRetention = absl::Hours(24 * 36500);  // 100 years

// OK if kMinRetention <= retention <= kMaxRetention; else InvalidArgument naming `field`,
// the range and the value.
absl::Status CheckRetention(const std::string& field, absl::Duration retention);

// `text` as a duration: a whole number of days ("400d") or weeks ("8w"), or anything
// absl::ParseDuration reads ("720h", "90m", "1h30m"), within CheckRetention's range.
// InvalidArgument naming `field`, the forms and the range otherwise.
absl::StatusOr<absl::Duration> ParseRetention(const std::string& field, const std::string& text);

}  // namespace fleetmark::service
