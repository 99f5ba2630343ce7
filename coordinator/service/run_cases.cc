#include "coordinator/service/run_cases.h"

#include <vector>

#include "engine/common/status_macros.h"
#include "engine/plan/case_filter.h"

namespace fleetmark::service {

absl::StatusOr<std::vector<std::string>> SelectedCaseIds(const v1::Plan& plan, bool quick, const std::string& filter) {
  FLEETMARK_ASSIGN_OR_RETURN(const std::vector<v1::CaseSpec> specs, engine::SelectCases(plan, quick, filter));
  std::vector<std::string> selected;
  selected.reserve(specs.size());
  for (const v1::CaseSpec& spec : specs) selected.push_back(spec.case_id());
  return selected;
}

absl::StatusOr<uint32_t> CountSelectedCases(const v1::Plan& plan, bool quick, const std::string& filter) {
  FLEETMARK_ASSIGN_OR_RETURN(const std::vector<std::string> ids, SelectedCaseIds(plan, quick, filter));
  return static_cast<uint32_t>(ids.size());
}

}  // namespace fleetmark::service
