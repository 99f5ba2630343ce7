#include "engine/scenarios/child_case.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "engine/common/scenario_result.h"
#include "engine/common/status_macros.h"
#include "engine/scenarios/case_status.h"

namespace fleetmark::engine {

void RunCaseInChild(std::string_view child_kind, const v1::CaseSpec& spec, const ChildOptions& options,
                    v1::CaseResult* result) {
  absl::StatusOr<std::string> response = RunInChild(child_kind, spec.SerializeAsString(), options);
  if (!response.ok()) {
    result->set_status(CaseStatusForError(response.status()));
    result->set_message(ChildErrorMessage(response.status()));
    return;
  }
  v1::CaseResult child;
  if (!child.ParseFromString(*response)) {
    result->set_status(v1::CASE_STATUS_FAILED);
    result->set_message("child process: response is not a CaseResult");
    return;
  }
  result->set_status(child.status());
  result->set_message(child.message());
  result->set_threads_used(child.threads_used());
  *result->mutable_counters() = child.counters();
  engine::CopyScenarioResult(child, result);
}

absl::StatusOr<std::string> ServeCaseInChild(std::string_view request, std::string_view scenario,
                                             absl::Status (*run_in_process)(const v1::CaseSpec& spec,
                                                                            v1::CaseResult* result)) {
  v1::CaseSpec spec;
  if (!spec.ParseFromArray(request.data(), static_cast<int>(request.size()))) {
    return absl::InvalidArgumentError(absl::StrCat(std::string(scenario), ": request is not a CaseSpec"));
  }
  v1::CaseResult result;
  FLEETMARK_RETURN_IF_ERROR(run_in_process(spec, &result));
  return result.SerializeAsString();
}

}  // namespace fleetmark::engine
