// Partial results: what an interrupted or cancelled run keeps of a case in progress
// (docs/results-schema.md, "Partial results"). Header-only; pure; thread-safe.
#pragma once

#include "fleetmark/v1/result.pb.h"

namespace fleetmark::engine {

// Whether `r` is a partial result: a batch case the run was interrupted (Ctrl-C,
// SIGTERM) or cancelled (runs cancel) in after it finished some of its rounds. Its
// status is CASE_STATUS_CANCELLED and its process fields (process_sample_counts,
// process_rounds) list those finished rounds; its samples and statistics cover them
// only (the process killed in flight is not among them). A cancelled case without a
// finished round has no process fields: it was not run.
inline bool IsPartialResult(const v1::CaseResult& r) {
  return r.status() == v1::CASE_STATUS_CANCELLED && r.process_sample_counts_size() > 0;
}

}  // namespace fleetmark::engine
