// CaseStatusForError: how the scenarios turn an error (of a child process, a server
// start-up or a fit check) into the CaseStatus of their result, so every scenario
// reports the same error the same way.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "fleetmark/v1/result.pb.h"

namespace fleetmark::engine {

// ResourceExhausted -> RESOURCE_EXHAUSTED, DeadlineExceeded -> TIMEOUT,
// Cancelled -> CANCELLED, Unimplemented -> UNSUPPORTED, anything else (OK included)
// -> FAILED. Pure; thread-safe.
v1::CaseStatus CaseStatusForError(const absl::Status& error);

// The message of a result whose child process returned `error`: an unsupported case
// (status code kUnimplemented: a case the strategy or scenario does not support) keeps the child's own
// reason; any other error is prefixed "child process: " (the child could not run it).
std::string ChildErrorMessage(const absl::Status& error);

// A load or fan-out result with status OK that measured nothing -- no response
// completed in the load's measured window, no fan-out request succeeded -- is not a
// measurement: its status becomes TIMEOUT when what ended the requests were timeouts
// (every call timed out), else FAILED; its latencies, throughput and total time are
// cleared (no median of nothing), and the message says why. Other results are left
// as they are. Returns whether it changed `result`. Pure; thread-safe.
bool MarkUnmeasured(v1::CaseResult& result);

}  // namespace fleetmark::engine
