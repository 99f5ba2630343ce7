// The `since` of `fleetmark changes list --since` and GET /api/v1/changes?since=: a
// duration back from now ("24h", "90m", "7d") or a UTC date or time ("2026-12-01",
// "2026-12-01T10:00:00Z"). One parser for both.
//
// Thread-safety: a pure function.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace fleetmark::changes {

// The moment `text` names (durations count back from `now`). InvalidArgument naming
// `field` and both forms for anything else (a negative duration included).
absl::StatusOr<absl::Time> ParseSince(const std::string& text, absl::Time now, const std::string& field);

}  // namespace fleetmark::changes
