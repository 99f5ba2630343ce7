// ExpandCases, ApplyQuick, ResolveMeasurement, StrategyLabel.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/plan/expand_internal.h"
#include "engine/measure/stop_rule.h"
#include "engine/scenarios/param_rules.h"
#include "engine/scenarios/registry.h"
#include "engine/plan/plan.h"
#include "engine/plan/sweep.h"

namespace fleetmark::engine {
namespace {

// The registry entry the matrix selects; nullptr when none is set.
const ScenarioTraits* ScenarioOf(const v1::Matrix& matrix) { return FindScenario(matrix.scenario_case()); }

void CopyScenarioParams(const v1::Matrix& matrix, v1::CaseSpec& spec) {
  switch (matrix.scenario_case()) {
    case v1::Matrix::kBatch:
      *spec.mutable_batch() = matrix.batch();
      if (spec.batch().tasks() == 0) spec.mutable_batch()->set_tasks(kDefaultBatchTasks);
      break;
    case v1::Matrix::kMemory:
      *spec.mutable_memory() = matrix.memory();
      break;
    case v1::Matrix::kFanout:
      *spec.mutable_fanout() = matrix.fanout();
      break;
    case v1::Matrix::kLoad:
      *spec.mutable_load() = matrix.load();
      break;
    case v1::Matrix::SCENARIO_NOT_SET:
      break;
  }
}

template <typename T>
std::vector<std::string> OrDefault(const T& values, const char* fallback) {
  std::vector<std::string> out(values.begin(), values.end());
  if (out.empty()) out.emplace_back(fallback);
  return out;
}

}  // namespace

std::string StrategyLabel(const v1::StrategySpec& strategy) {
  if (!strategy.label().empty()) return strategy.label();
  if (strategy.threads() == 0) return strategy.name();
  return absl::StrCat(strategy.name(), "_", strategy.threads());
}

uint64_t CountCases(const google::protobuf::RepeatedPtrField<v1::Matrix>& matrices) {
  constexpr uint64_t kSaturated = uint64_t{1} << 62;
  uint64_t total = 0;
  for (const v1::Matrix& m : matrices) {
    // Every factor is < 2^31 (protobuf repeated sizes are ints), so pairwise products
    // are checked against the saturation bound before multiplying further.
    // A synthetic workload counts once per sweep point (at most kMaxSweepPoints^2).
    uint64_t points = 1;
    for (int s = 0; s < std::min(m.sweeps_size(), kMaxSweeps); ++s) points *= SweepValues(m.sweeps(s)).size();
    uint64_t n = 0;
    for (const std::string& workload : m.workloads()) n += workload == kSyntheticWorkload ? points : 1;
    n = std::max<uint64_t>(n, 1);
    for (int factor : {std::max(m.io_modes_size(), 1), m.strategies_size(), std::max(m.placements_size(), 1)}) {
      n = (factor != 0 && n > kSaturated / static_cast<uint64_t>(factor)) ? kSaturated
                                                                          : n * static_cast<uint64_t>(factor);
    }
    total = std::min(kSaturated, total + n);
  }
  return total;
}

std::vector<ExpandedCase> ExpandMatrices(const google::protobuf::RepeatedPtrField<v1::Matrix>& matrices) {
  std::vector<ExpandedCase> out;
  for (int mi = 0; mi < matrices.size(); ++mi) {
    const v1::Matrix& m = matrices[mi];
    const ScenarioTraits* traits = ScenarioOf(m);
    const std::string scenario = traits != nullptr ? std::string(traits->name) : "";
    // Batch needs workloads (needs_workload: validation insists); other scenarios may
    // have none.
    const std::vector<std::string> workloads = OrDefault(m.workloads(), "");
    const std::vector<std::string> io_modes = OrDefault(m.io_modes(), "blocking");
    const std::vector<std::string> placements = OrDefault(m.placements(), "any");
    std::vector<std::string> swept;
    for (int s = 0; s < std::min(m.sweeps_size(), kMaxSweeps); ++s) swept.push_back(m.sweeps(s).param());
    // Each workload with its points: one (no parameters) for all but synthetic.
    std::vector<std::pair<size_t, std::optional<v1::SyntheticParams>>> units;
    for (size_t wi = 0; wi < workloads.size(); ++wi) {
      if (workloads[wi] != kSyntheticWorkload) {
        units.emplace_back(wi, std::nullopt);
        continue;
      }
      for (v1::SyntheticParams& point : SweepPoints(m)) units.emplace_back(wi, std::move(point));
    }
    for (const auto& [wi, point] : units) {
      const std::string& workload = workloads[wi];
      if (workload.empty() && traits != nullptr && traits->needs_workload) continue;
      const std::string id_workload = point ? SyntheticWorkloadText(*point, swept, /*with_swept=*/true) : workload;
      for (size_t ii = 0; ii < io_modes.size(); ++ii) {
        const std::string& io_mode = io_modes[ii];
        for (int si = 0; si < m.strategies_size(); ++si) {
          for (size_t pi = 0; pi < placements.size(); ++pi) {
            const std::string& placement = placements[pi];
            ExpandedCase c;
            c.matrix_index = mi;
            c.workload_index = m.workloads_size() > 0 ? static_cast<int>(wi) : -1;
            c.io_mode_index = m.io_modes_size() > 0 ? static_cast<int>(ii) : -1;
            c.strategy_index = si;
            c.placement_index = m.placements_size() > 0 ? static_cast<int>(pi) : -1;
            v1::CaseSpec& spec = c.spec;
            *spec.mutable_strategy() = m.strategies(si);
            const std::string label = StrategyLabel(m.strategies(si));
            spec.mutable_strategy()->set_label(label);
            spec.set_workload(workload);
            spec.set_io_mode(io_mode);
            spec.set_scenario(scenario);
            const std::string shown_placement = placement.empty() ? "any" : placement;
            spec.set_placement(shown_placement);
            CopyScenarioParams(m, spec);
            if (point) {
              *spec.mutable_synthetic() = *point;
              for (const std::string& name : swept) spec.add_swept(name);
            }
            spec.set_case_id(absl::StrCat(scenario, "/", id_workload.empty() ? "-" : id_workload, "/", io_mode, "/",
                                          label, "/", shown_placement));
            out.push_back(std::move(c));
          }
        }
      }
    }
  }
  return out;
}

v1::Plan ApplyQuick(const v1::Plan& plan) {
  v1::Plan out = plan;
  // proto3 MergeFrom copies exactly the fields `quick` sets (non-zero), replacing
  // `measurement`'s.
  out.mutable_measurement()->MergeFrom(plan.quick());
  // Racing stops earlier under --quick unless `quick` sets its own cap; the minimum
  // processes stay (kMinBatchProcesses holds in every mode).
  if (plan.quick().max_processes() == 0) out.mutable_measurement()->set_max_processes(kQuickMaxProcesses);
  if (plan.quick_matrix_size() > 0) *out.mutable_matrix() = plan.quick_matrix();
  out.clear_quick();
  out.clear_quick_matrix();
  return out;
}

v1::MeasurementSettings ResolveMeasurement(const v1::MeasurementSettings& settings) {
  v1::MeasurementSettings out = settings;
  if (out.warmup_seconds() == 0) out.set_warmup_seconds(kDefaultWarmupSeconds);
  if (out.target_ci_percent() == 0) out.set_target_ci_percent(kDefaultTargetCiPercent);
  if (out.max_repetitions() == 0) out.set_max_repetitions(kDefaultMaxRepetitions);
  if (out.min_repetitions() == 0) {
    out.set_min_repetitions(static_cast<uint32_t>(std::min<int64_t>(kDefaultMinRepetitions, out.max_repetitions())));
  }
  if (out.max_seconds_per_case() == 0) out.set_max_seconds_per_case(kDefaultMaxSecondsPerCase);
  if (out.min_seconds_per_case() == 0) {
    out.set_min_seconds_per_case(std::min(kDefaultMinSecondsPerCase, out.max_seconds_per_case()));
  }
  if (out.rounds() == 0) out.set_rounds(kDefaultRounds);
  if (out.processes() == 0) out.set_processes(kDefaultProcesses);
  if (out.max_processes() == 0) out.set_max_processes(kDefaultMaxProcesses);
  return out;
}

std::vector<v1::CaseSpec> ExpandCases(const v1::Plan& plan, bool quick) {
  const v1::Plan effective = quick ? ApplyQuick(plan) : plan;
  std::vector<v1::CaseSpec> out;
  if (CountCases(effective.matrix()) > kMaxCases) return out;
  for (ExpandedCase& c : ExpandMatrices(effective.matrix())) out.push_back(std::move(c.spec));
  return out;
}

}  // namespace fleetmark::engine
