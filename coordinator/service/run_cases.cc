#include "coordinator/service/run_cases.h"

#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "engine/common/status_macros.h"
#include "engine/plan/plan.h"
#include "engine/runner/case_filter.h"

namespace fleetmark::service {

absl::StatusOr<uint32_t> CountSelectedCases(const v1::Plan& plan, bool quick, const std::string& filter) {
  FLEETMARK_ASSIGN_OR_RETURN(const engine::CaseFilter compiled, engine::CaseFilter::Compile(filter));
  const std::vector<v1::CaseSpec> specs = engine::ExpandCases(plan, quick);
  uint32_t selected = 0;
  for (const v1::CaseSpec& spec : specs) selected += compiled.Matches(spec.case_id()) ? 1 : 0;
  if (selected == 0) {
    // The message quotes at most 64 bytes of the pattern, like CaseFilter::Compile.
    return absl::InvalidArgumentError(absl::StrCat("--filter: \"", absl::CEscape(filter.substr(0, 64)),
                                                   filter.size() > 64 ? "...\"" : "\"", " matches none of the plan's ",
                                                   specs.size(), quick ? " quick" : "", " case ids"));
  }
  return selected;
}

}  // namespace fleetmark::service
