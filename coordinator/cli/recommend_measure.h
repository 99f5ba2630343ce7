// `fleetmark recommend --measure` (recommend_measure.cc): measure the plan that
// brackets a profile here or on the fleet and answer from it. Main thread only.
#pragma once

#include <string>

#include "engine/report/recommend.h"

namespace fleetmark::cli {

// Reads --tasks, --select, --timeout, --dry_run, --plan_out and the connection flags; `format` is
// "table" or "json" (checked by the caller); `usage` is recommend's usage line. Returns
// the exit code: 0 answered (or --dry_run), 2 bad input (naming the flag or key), 1 a
// measurement or coordinator failure, 4 the plan's preflight gates kept failing.
int RecommendMeasure(const report::Profile& profile, const std::string& format, const std::string& usage);

}  // namespace fleetmark::cli
