// Internal to the CLI: how the outcomes of a run's cases become the process exit code,
// one rule for local `fleetmark run` and `fleetmark submit --wait`.
#pragma once

#include "fleetmark/v1/result.pb.h"
#include "google/protobuf/repeated_ptr_field.h"

namespace fleetmark::cli {

struct CaseOutcomes {
  int ok = 0;
  int unsupported = 0;  // the host or build cannot run the case: not a failure
  int failed = 0;       // every other status (failed, resource exhausted, timed out, ...)
  int cancelled = 0;
};

// Counts `results` by status. Pure function.
CaseOutcomes CountOutcomes(const google::protobuf::RepeatedPtrField<v1::CaseResult>& results);

// kExitCasesFailed (3) when any case failed, else kExitOk (0). Unsupported and
// cancelled cases are not failures (an interrupted run has its own exit code).
int ExitCodeForOutcomes(const CaseOutcomes& outcomes);

}  // namespace fleetmark::cli
