// A run as the control calls show it (GetRun, WatchRun): the stored run plus, for its
// running jobs on agents connected here, the case each is measuring; and WatchRun's
// stream of it, written whenever it changes until the run ends.
//
// Thread-safety: AddCurrentCases reads the registry's sessions (thread-safe); the
// watcher belongs to gRPC (it deletes itself in OnDone) and polls on the executor.
#pragma once

#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/time/time.h"
#include "coordinator/service/agent_registry.h"
#include "coordinator/service/executor.h"
#include "coordinator/store/run_store.h"
#include "fleetmark/v1/control.pb.h"

namespace fleetmark::service {

// Fills JobInfo.current_case_id of `run`'s running jobs whose agents are connected here
// (their last JobProgress; not stored, so other coordinators' agents have none). Looks
// at every session of the registry: O(connected agents) per call.
void AddCurrentCases(const AgentRegistry& registry, v1::RunInfo& run);

// WatchRun's reactor: streams run `run_id` (an id or a unique prefix, resolved on the
// first poll, RunStore::ResolveRunId) whenever it changes, polling every `poll` (3 × poll
// after an Unavailable store, ending with it after 100 in a row), and finishes OK once
// the run is over (RunFinished). Other errors end the stream with their code. The
// references must outlive the stream.
grpc::ServerWriteReactor<v1::RunInfo>* NewRunWatcher(store::RunStore& store, Executor& executor,
                                                     const AgentRegistry& registry, std::string run_id,
                                                     absl::Duration poll);

}  // namespace fleetmark::service
