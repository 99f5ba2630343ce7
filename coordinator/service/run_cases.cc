#include "coordinator/service/run_cases.h"

#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "engine/common/status_macros.h"
#include "engine/plan/plan.h"
#include "engine/plan/case_filter.h"

namespace fleetmark::service {

absl::StatusOr<std::vector<std::string>> SelectedCaseIds(const v1::Plan& plan, bool quick, const std::string& filter) {
  FLEETMARK_ASSIGN_OR_RETURN(const engine::CaseFilter compiled, engine::CaseFilter::Compile(filter));
  const std::vector<v1::CaseSpec> specs = engine::ExpandCases(plan, quick);
  std::vector<std::string> selected;
  for (const v1::CaseSpec& spec : specs) {
    if (compiled.Matches(spec.case_id())) selected.push_back(spec.case_id());
  }
  if (selected.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("--filter: ", engine::QuotedFilter(filter),
                                                   " matches none of the plan's ", specs.size(), quick ? " quick" : "",
                                                   " case ids"));
  }
  return selected;
}

absl::StatusOr<uint32_t> CountSelectedCases(const v1::Plan& plan, bool quick, const std::string& filter) {
  FLEETMARK_ASSIGN_OR_RETURN(const std::vector<std::string> ids, SelectedCaseIds(plan, quick, filter));
  return static_cast<uint32_t>(ids.size());
}

}  // namespace fleetmark::service
