#include "coordinator/cli/case_outcomes.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "coordinator/cli/command.h"
#include "engine/common/partial_result.h"

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
        if (engine::IsPartialResult(r)) {
          ++outcomes.partial;
        } else if (r.started_unix_ns() != 0) {
          ++outcomes.stopped_in_first_round;
        }
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

std::string KeptCounts(const CaseOutcomes& outcomes) {
  const int finished = outcomes.total() - outcomes.cancelled;
  const int stopped = outcomes.stopped_in_first_round;
  std::string text = absl::StrCat("kept ", finished, " finished case", finished == 1 ? "" : "s", ", ", outcomes.partial,
                                  " partial, ", outcomes.cancelled - outcomes.partial - stopped, " not run");
  if (stopped > 0)
    absl::StrAppend(&text, ", ", stopped, " stopped in ", stopped == 1 ? "its" : "their", " first round");
  return text;
}

}  // namespace fleetmark::cli
