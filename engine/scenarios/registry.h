// The scenario registry: every scenario's name and traits, in one table.
//
// This table is the single source of what a scenario is. Code outside engine/scenarios
// never compares a scenario name: it looks the entry up (FindScenario, LookupScenario)
// and asks its traits (is_batch, needs_workload, result_case, ...), or asks IsBatch.
// Header-only over the generated messages (target fleetmark_scenario_registry), so the
// coordinator, the agent's hello and the reports use it without linking the scenarios.
// Adding a scenario: a row here (its Matrix and CaseSpec oneof field, named as the row),
// its runner in scenario.cc's kRunners (a static_assert holds it to this table's order)
// unless it is batch, and its own files (params, rules, result rendering).
//
//   if (IsBatch(spec)) ...  // the runner's repetition loop, a strategy map's points
//   const ScenarioTraits* s = FindScenario(spec.scenario());
//
// Thread-safety: constant tables and pure functions; safe from any thread.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/common/suggest.h"
#include "fleetmark/v1/plan.pb.h"
#include "fleetmark/v1/result.pb.h"

namespace fleetmark::engine {

struct ScenarioTraits {
  // CaseSpec.scenario, case ids' first part, and the name of its field in Matrix's
  // `scenario` and CaseSpec's `params` oneofs.
  std::string_view name;
  std::string_view description;          // what it measures, one line, for `fleetmark list`
  v1::Matrix::ScenarioCase matrix_case;  // the plan's field that selects it
  // The part of CaseResult's `scenario_result` oneof it fills; SCENARIO_RESULT_NOT_SET:
  // none, its measurement is the timing statistics (stats, samples, process medians).
  v1::CaseResult::ScenarioResultCase result_case;
  // Measured by the runner's repetition loop (engine/runner): timed repetitions, each
  // round's slice in a fresh process, cases differing only in strategy raced as one
  // group; its ok results are a strategy map's and a recommendation's points. False:
  // one RunScenarioCase (scenario.h) per case, in a child process.
  bool is_batch;
  // Runs the plan's workload: a matrix of it needs at least one, and a case without
  // one is not expanded. False: the case ids may still name a workload.
  bool needs_workload;
  // Non-empty: runs no workload, and a matrix of it naming one is refused for this
  // reason (a workload would only rename the same measurement). Empty: accepted.
  std::string_view refuses_workload;
};

inline constexpr std::array<ScenarioTraits, 4> kScenarios = {{
    {"batch", "wall time to run all n tasks and wait for all (study S1)", v1::Matrix::kBatch,
     v1::CaseResult::SCENARIO_RESULT_NOT_SET, true, true, ""},
    // Memory runs no workload either, but accepts one as a name in its case ids (stored
    // nightly schedules have `workloads: ["storage"]` on their memory blocks: refusing it
    // would fail them on every agent and cut their history).
    {"memory", "resident memory vs live waiting tasks, KiB/task by least squares (study S2)", v1::Matrix::kMemory,
     v1::CaseResult::kMemory, false, false, ""},
    {"fanout", "R requests each calling a dependency D times with delay and timeout (study S4)", v1::Matrix::kFanout,
     v1::CaseResult::kFanout, false, false, "fanout's tasks only wait on their dependency calls"},
    {"load", "closed-loop virtual users against an in-process HTTP server (study S3)", v1::Matrix::kLoad,
     v1::CaseResult::kLoad, false, false, "its server does fixed work"},
}};

// The scenario of a spec whose scenario is empty (results stored or written before
// CaseSpec.scenario was always set): the first row, batch.
inline constexpr const ScenarioTraits& kDefaultScenario = kScenarios[0];
static_assert(kScenarios[0].is_batch, "the default scenario (an empty CaseSpec.scenario) is batch");

// The entry named `name`, or nullptr for an unknown (or empty) name.
constexpr const ScenarioTraits* FindScenario(std::string_view name) {
  for (const ScenarioTraits& s : kScenarios) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

// The entry a plan's matrix selects, or nullptr for SCENARIO_NOT_SET.
constexpr const ScenarioTraits* FindScenario(v1::Matrix::ScenarioCase matrix_case) {
  for (const ScenarioTraits& s : kScenarios) {
    if (s.matrix_case == matrix_case) return &s;
  }
  return nullptr;
}

// The registered names, in registry order.
inline std::vector<std::string> ScenarioNames() {
  std::vector<std::string> names;
  for (const ScenarioTraits& s : kScenarios) names.emplace_back(s.name);
  return names;
}

// The entry named `name`, or InvalidArgument "scenario: one of batch, memory, fanout,
// load; got \"bacth\" (did you mean \"batch\"?)" (suggest.h's OneOfMessage).
inline absl::StatusOr<const ScenarioTraits*> LookupScenario(std::string_view name) {
  if (const ScenarioTraits* s = FindScenario(name)) return s;
  return absl::InvalidArgumentError("scenario: " + OneOfMessage(name, ScenarioNames()));
}

// `name` as shown and grouped: the default scenario's name for an empty one.
constexpr std::string_view ScenarioOrDefault(std::string_view name) {
  return name.empty() ? kDefaultScenario.name : name;
}

// Whether a case of scenario `name` is a batch case (is_batch above); an empty name is
// the default scenario, batch; an unknown name is not. The one rule for every caller.
constexpr bool IsBatch(std::string_view name) {
  const ScenarioTraits* s = FindScenario(ScenarioOrDefault(name));
  return s != nullptr && s->is_batch;
}
inline bool IsBatch(const v1::CaseSpec& spec) { return IsBatch(spec.scenario()); }

}  // namespace fleetmark::engine
