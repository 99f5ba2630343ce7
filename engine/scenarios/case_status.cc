#include "engine/scenarios/case_status.h"

namespace fleetmark::engine {

v1::CaseStatus CaseStatusForError(const absl::Status& error) {
  if (absl::IsResourceExhausted(error)) return v1::CASE_STATUS_RESOURCE_EXHAUSTED;
  if (absl::IsDeadlineExceeded(error)) return v1::CASE_STATUS_TIMEOUT;
  if (absl::IsCancelled(error)) return v1::CASE_STATUS_CANCELLED;
  if (absl::IsUnimplemented(error)) return v1::CASE_STATUS_UNSUPPORTED;
  return v1::CASE_STATUS_FAILED;
}

}  // namespace fleetmark::engine
