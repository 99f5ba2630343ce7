// The group of a batch case: the cases of a plan that differ only in strategy (same
// scenario, workload with its synthetic parameters, io mode and placement). Its
// contenders are what a verdict compares (engine/measure/verdict.h). One definition for
// the runner, which races each point's contenders back to back (engine/runner), and the
// strategy map, which groups a sweep's points by it (engine/report). Header-only over the
// generated message, so the report library needs no plan library; pure, thread-safe.
#pragma once

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/common/synthetic_text.h"
#include "engine/scenarios/registry.h"
#include "fleetmark/v1/result.pb.h"

namespace fleetmark::engine {

// "batch/synthetic[cpu_ns=1000]/blocking/any": scenario/workload/io mode/placement
// (empty fields as the plan's defaults: batch, "-", blocking, any). A synthetic
// workload's parameters are in it, its swept ones only `with_swept_values` (then the key
// is one point of the sweep; without, one line of points). `swept` names the swept
// parameters (CaseSpec.swept).
inline std::string CaseGroupKey(const v1::CaseSpec& spec, const std::vector<std::string>& swept,
                                bool with_swept_values) {
  const std::string workload = spec.has_synthetic() ? SyntheticWorkloadText(spec.synthetic(), swept, with_swept_values)
                                                    : (spec.workload().empty() ? "-" : spec.workload());
  return absl::StrCat(std::string(ScenarioOrDefault(spec.scenario())), "/", workload, "/",
                      spec.io_mode().empty() ? "blocking" : spec.io_mode(), "/",
                      spec.placement().empty() ? "any" : spec.placement());
}

// The point's key: CaseGroupKey with the spec's own swept parameters and their values.
// Cases with equal keys are one group of contenders.
inline std::string CasePointKey(const v1::CaseSpec& spec) {
  return CaseGroupKey(spec, std::vector<std::string>(spec.swept().begin(), spec.swept().end()),
                      /*with_swept_values=*/true);
}

}  // namespace fleetmark::engine
