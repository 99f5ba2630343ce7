// RunCaseInChild: the parent side every child-run scenario (fanout, load) shares —
// send the CaseSpec to a child process, then fill the case's result from the
// CaseResult the child sends back, or from the error when the child failed.
#pragma once

#include <string_view>

#include "engine/runner/child.h"
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
void RunCaseInChild(std::string_view child_kind, const v1::CaseSpec& spec,
                    const ChildOptions& options, v1::CaseResult* result);

}  // namespace fleetmark::engine
