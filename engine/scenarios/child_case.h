// RunCaseInChild / ServeCaseInChild: the two sides every child-run scenario (fanout,
// load) shares. The parent sends the CaseSpec to a child process and fills the case's
// result from the CaseResult the child sends back, or from the error when it failed.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/child/child.h"
#include "fleetmark/v1/result.pb.h"

namespace fleetmark::engine {

// Runs `spec` in a child registered as `child_kind` (RunInChild with `options`;
// the handler must answer with a serialized v1::CaseResult) and sets in `*result`:
//   - child answered: its status, message, threads_used, counters and its scenario
//     result (memory/fanout/load, whichever it set);
//   - child failed: status CaseStatusForError(error), message "child process: <error>";
//   - answer not a CaseResult: FAILED, "child process: response is not a CaseResult".
// Never fails: every outcome is written into `*result` (not owned, must be non-null).
// Blocks until the child exits. Thread-safe as RunInChild.
void RunCaseInChild(std::string_view child_kind, const v1::CaseSpec& spec, const ChildOptions& options,
                    v1::CaseResult* result);

// The child side, for a ChildHandler: parses `request` as a serialized CaseSpec (else
// InvalidArgument "<scenario>: request is not a CaseSpec"), runs `run_in_process` on it
// and returns the serialized CaseResult it filled; its error is returned unchanged.
absl::StatusOr<std::string> ServeCaseInChild(std::string_view request, std::string_view scenario,
                                             absl::Status (*run_in_process)(const v1::CaseSpec& spec,
                                                                            v1::CaseResult* result));

}  // namespace fleetmark::engine
