// `fleetmark recommend --measure` (recommend_measure.cc): measure the plan that
// brackets a profile here or on the fleet and answer from it. Main thread only.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "engine/report/recommend.h"

namespace fleetmark::cli {

// Reads --tasks, --select, --timeout, --dry_run, --plan_out and the connection flags; `format` is
// "table" or "json" (checked by the caller); `usage` is recommend's usage line. Returns
// the exit code, 0 answered (or --dry_run) or 4 the plan's preflight gates kept failing
// (said on stderr), or the error (exit_codes.h): bad input naming the flag or key (exit
// 2), a measurement or coordinator failure (1, or 5 when unreachable).
absl::StatusOr<int> RecommendMeasure(const report::Profile& profile, const std::string& format,
                                     const std::string& usage);

}  // namespace fleetmark::cli
