#include "coordinator/cli/case_outcomes.h"

#include "absl/strings/str_format.h"
#include "coordinator/cli/command.h"

namespace fleetmark::cli {

CaseOutcomes CountOutcomes(const google::protobuf::RepeatedPtrField<v1::CaseResult>& results) {
  CaseOutcomes outcomes;
  for (const v1::CaseResult& r : results) {
    switch (r.status()) {
      case v1::CASE_STATUS_OK:
        ++outcomes.ok;
        break;
      case v1::CASE_STATUS_UNSUPPORTED:
        ++outcomes.unsupported;
        break;
      case v1::CASE_STATUS_RESOURCE_EXHAUSTED:
        ++outcomes.resource_exhausted;
        break;
      case v1::CASE_STATUS_CANCELLED:
        ++outcomes.cancelled;
        break;
      default:
        ++outcomes.failed;
        break;
    }
  }
  return outcomes;
}

int ExitCodeForOutcomes(const CaseOutcomes& outcomes) { return outcomes.failed > 0 ? kExitCasesFailed : kExitOk; }

std::string OutcomeCounts(const CaseOutcomes& outcomes) {
  return absl::StrFormat("%d ok, %d unsupported, %d resource exhausted, %d failed", outcomes.ok, outcomes.unsupported,
                         outcomes.resource_exhausted, outcomes.failed);
}

}  // namespace fleetmark::cli
