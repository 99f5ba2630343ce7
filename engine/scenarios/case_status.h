// CaseStatusForError: how the scenarios turn an error (of a child process, a server
// start-up or a fit check) into the CaseStatus of their result, so every scenario
// reports the same error the same way.
#pragma once

#include "absl/status/status.h"
#include "fleetmark/v1/result.pb.h"

namespace fleetmark::engine {

// ResourceExhausted -> RESOURCE_EXHAUSTED, DeadlineExceeded -> TIMEOUT,
// Cancelled -> CANCELLED, Unimplemented -> UNSUPPORTED, anything else (OK included)
// -> FAILED. Pure; thread-safe.
v1::CaseStatus CaseStatusForError(const absl::Status& error);

}  // namespace fleetmark::engine
