// The scenario-specific part of a case result (result.proto's `scenario_result` oneof:
// memory, fanout or load), copied from one CaseResult to another: the runner takes it
// from a child process's result (engine/scenarios/child_case.cc) and the web reader
// from a stored result proto (coordinator/store/web_queries.cc). One definition, so a
// new scenario's result is carried by both once added here (the switch is exhaustive:
// -Wswitch names a missing case). Header-only over the generated message; pure.
#pragma once

#include "fleetmark/v1/result.pb.h"

namespace fleetmark::engine {

// Sets `to`'s scenario_result to a copy of `from`'s; leaves `to` unchanged when `from`
// has none. `to` must not be null.
inline void CopyScenarioResult(const v1::CaseResult& from, v1::CaseResult* to) {
  switch (from.scenario_result_case()) {
    case v1::CaseResult::kMemory:
      *to->mutable_memory() = from.memory();
      break;
    case v1::CaseResult::kFanout:
      *to->mutable_fanout() = from.fanout();
      break;
    case v1::CaseResult::kLoad:
      *to->mutable_load() = from.load();
      break;
    case v1::CaseResult::SCENARIO_RESULT_NOT_SET:
      break;
  }
}

}  // namespace fleetmark::engine
