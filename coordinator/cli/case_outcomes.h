// Internal to the CLI: how the outcomes of a run's cases become the process exit code,
// one rule for local `fleetmark run` and `fleetmark submit --wait` (docs/cli.md, "Outcomes and exit codes").
//
// Outcomes that are answers, not failures: `ok`, `unsupported` (the strategy or host
// cannot run the case) and `resource_exhausted` (threads, memory or descriptors ran out:
// what the memory and fan-out studies measure, e.g. a thread per call dying at 10 000
// requests). Failures: `failed`, `timeout` and any status this build does not know.
// `cancelled` is neither: an interrupted or deferred run has its own exit code.
#pragma once

#include <string>

#include "fleetmark/v1/result.pb.h"
#include "google/protobuf/repeated_ptr_field.h"

namespace fleetmark::cli {

struct CaseOutcomes {
  int ok = 0;
  int unsupported = 0;         // the host or build cannot run the case: not a failure
  int resource_exhausted = 0;  // a measured limit of the strategy: not a failure
  int failed = 0;              // failed, timeout, and unknown statuses
  int cancelled = 0;
  int partial = 0;  // of `cancelled`: partial results (engine/common/partial_result.h)
  // Of `cancelled`, not partial: started (started_unix_ns set) but stopped before any of
  // its rounds finished, e.g. in a repetition that ran for minutes.
  int stopped_in_first_round = 0;
  int total() const { return ok + unsupported + resource_exhausted + failed + cancelled; }
};

// Counts `results` by status. Pure function.
CaseOutcomes CountOutcomes(const google::protobuf::RepeatedPtrField<v1::CaseResult>& results);

// kExitCasesFailed (3) when any case failed (outcomes.failed > 0), else kExitOk (0).
int ExitCodeForOutcomes(const CaseOutcomes& outcomes);

// "3 ok, 1 unsupported, 1 resource exhausted, 0 failed" (the counts, in this order; a
// cancelled count is the caller's to add with its reason). Pure function.
std::string OutcomeCounts(const CaseOutcomes& outcomes);

// What an interrupted or cancelled run kept: "kept 3 finished cases, 2 partial, 5 not
// run" (finished: any status but cancelled; partial: IsPartialResult; not run: the
// cancelled ones that never started), then ", 1 stopped in its first round" for the
// started ones that finished no round. Pure function.
std::string KeptCounts(const CaseOutcomes& outcomes);

}  // namespace fleetmark::cli
