// The case ids a fleet run measures: engine::SelectCases (engine/plan/case_filter.h,
// the same rule as `fleetmark run`) as ids. Both the CLI (before any network call) and
// the coordinator (run_builder.h, before creating a run or a schedule) check a
// submission with it.
//
// Thread-safety: a pure function.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "fleetmark/v1/plan.pb.h"

namespace fleetmark::service {

// The case ids of `plan`'s cases (after `quick`) that match `filter` ("" matches all),
// in expansion order. InvalidArgument naming --filter if the pattern is malformed (RE2
// syntax, over engine::kMaxFilterLength bytes, NUL bytes) or matches none of the
// plan's cases. `plan` must already be valid (engine::ValidatePlan).
absl::StatusOr<std::vector<std::string>> SelectedCaseIds(const v1::Plan& plan, bool quick, const std::string& filter);

// How many cases SelectedCaseIds selects (same errors).
absl::StatusOr<uint32_t> CountSelectedCases(const v1::Plan& plan, bool quick, const std::string& filter);

}  // namespace fleetmark::service
