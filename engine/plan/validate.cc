// ValidatePlan: names against the registry, numbers against the documented caps.
// Returns the first problem found, as "[file:line:col: ]plan.<path>: <rule>, got <value>".
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/common/status_macros.h"
#include "engine/plan/expand_internal.h"
#include "engine/plan/plan.h"
#include "engine/measure/stop_rule.h"
#include "engine/plan/registry.h"
#include "engine/plan/source_map.h"
#include "engine/scenarios/params.h"
#include "engine/topology/placement_spec.h"

namespace fleetmark::engine {
namespace {

constexpr size_t kMaxLabelLength = 64;

FieldPath Append(FieldPath path, std::string field, int index = -1) {
  path.push_back({std::move(field), index});
  return path;
}

template <typename Table>
std::string AllowedNames(const Table& table) {
  return absl::StrJoin(table, ", ", [](std::string* out, const auto& entry) {
    if constexpr (std::is_convertible_v<decltype(entry), std::string_view>) {
      out->append(entry);
    } else {
      out->append(entry.name);
    }
  });
}

template <typename Table>
bool Contains(const Table& table, std::string_view name) {
  for (const auto& entry : table) {
    if constexpr (std::is_convertible_v<decltype(entry), std::string_view>) {
      if (entry == name) return true;
    } else {
      if (entry.name == name) return true;
    }
  }
  return false;
}

bool IsLabelChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ||
         c == '.' || c == '+' || c == ':';
}

class Validator {
 public:
  Validator(const PlanSourceMap* source_map, const std::string& source_name)
      : source_map_(source_map), source_name_(source_name) {}

  absl::Status CheckPlan(const v1::Plan& plan) {
    if (plan.matrix_size() == 0) {
      return Error({{"matrix"}}, "at least one matrix block is required, got 0");
    }
    FLEETMARK_RETURN_IF_ERROR(CheckMatrices(plan.matrix(), "matrix"));
    FLEETMARK_RETURN_IF_ERROR(CheckMatrices(plan.quick_matrix(), "quick_matrix"));
    FLEETMARK_RETURN_IF_ERROR(CheckMeasurement(plan.measurement(), {{"measurement"}}));
    FLEETMARK_RETURN_IF_ERROR(CheckMeasurement(plan.quick(), {{"quick"}}));
    // The settings each form of the plan actually runs with must be coherent too.
    FLEETMARK_RETURN_IF_ERROR(
        CheckRepetitionOrder(ResolveMeasurement(plan.measurement()), {{"measurement"}}));
    FLEETMARK_RETURN_IF_ERROR(CheckRepetitionOrder(
        ResolveMeasurement(ApplyQuick(plan).measurement()), {{"quick"}}));
    FLEETMARK_RETURN_IF_ERROR(CheckCases(plan.matrix(), "matrix"));
    if (plan.quick_matrix_size() > 0) {
      FLEETMARK_RETURN_IF_ERROR(CheckCases(plan.quick_matrix(), "quick_matrix"));
    }
    return absl::OkStatus();
  }

 private:
  absl::Status Error(const FieldPath& path, absl::string_view detail) const {
    std::string prefix;
    if (source_map_ != nullptr) {
      if (auto pos = source_map_->Locate(path)) {
        prefix = absl::StrCat(source_name_, ":", pos->line, ":", pos->column, ": ");
      }
    }
    if (prefix.empty() && !source_name_.empty()) prefix = absl::StrCat(source_name_, ": ");
    return absl::InvalidArgumentError(
        absl::StrCat(prefix, FormatFieldPath(path), ": ", detail));
  }

  absl::Status CheckMax(const FieldPath& path, uint64_t value, uint64_t max) const {
    if (value <= max) return absl::OkStatus();
    return Error(path, absl::StrCat("0 <= ", path.back().field, " <= ", max, ", got ", value));
  }

  absl::Status CheckRange(const FieldPath& path, uint64_t value, uint64_t min,
                          uint64_t max) const {
    if (value >= min && value <= max) return absl::OkStatus();
    return Error(path,
                 absl::StrCat(min, " <= ", path.back().field, " <= ", max, ", got ", value));
  }

  absl::Status CheckSeconds(const FieldPath& path, double value, double max) const {
    if (std::isfinite(value) && value >= 0 && value <= max) return absl::OkStatus();
    return Error(path, absl::StrCat("0 <= ", path.back().field, " <= ", max, " (seconds), got ",
                                    value));
  }

  absl::Status CheckMatrices(const google::protobuf::RepeatedPtrField<v1::Matrix>& matrices,
                             const char* field) const {
    for (int i = 0; i < matrices.size(); ++i) {
      FLEETMARK_RETURN_IF_ERROR(CheckMatrix(matrices[i], {{field, i}}));
    }
    return absl::OkStatus();
  }

  absl::Status CheckMatrix(const v1::Matrix& m, const FieldPath& path) const {
    if (m.scenario_case() == v1::Matrix::SCENARIO_NOT_SET) {
      return Error(path, absl::StrCat("a scenario is required (one of ",
                                      AllowedNames(kScenarios), "), got none"));
    }
    if (m.strategies_size() == 0) {
      return Error(Append(path, "strategies"), "at least one strategy is required, got 0");
    }
    for (int i = 0; i < m.strategies_size(); ++i) {
      FLEETMARK_RETURN_IF_ERROR(CheckStrategy(m.strategies(i), Append(path, "strategies", i)));
    }
    for (int i = 0; i < m.workloads_size(); ++i) {
      if (!Contains(kWorkloads, m.workloads(i))) {
        return Error(Append(path, "workloads", i),
                     absl::StrCat("one of ", AllowedNames(kWorkloads), "; got \"",
                                  absl::CEscape(m.workloads(i)), "\""));
      }
    }
    if (m.has_batch() && m.workloads_size() == 0) {
      return Error(Append(path, "workloads"),
                   absl::StrCat("the batch scenario needs at least one workload (",
                                AllowedNames(kWorkloads), "), got 0"));
    }
    if (m.has_load() && m.workloads_size() > 0) {
      return Error(Append(path, "workloads", 0),
                   absl::StrCat("the load scenario has no workload (its server does fixed "
                                "work), got \"", absl::CEscape(m.workloads(0)), "\""));
    }
    for (int i = 0; i < m.io_modes_size(); ++i) {
      if (!Contains(kIoModes, m.io_modes(i))) {
        return Error(Append(path, "io_modes", i),
                     absl::StrCat("one of ", AllowedNames(kIoModes), "; got \"",
                                  absl::CEscape(m.io_modes(i)), "\""));
      }
    }
    for (int i = 0; i < m.placements_size(); ++i) {
      absl::StatusOr<PlacementSpec> spec = ParsePlacement(m.placements(i));
      if (!spec.ok()) return Error(Append(path, "placements", i), spec.status().message());
    }
    return CheckScenario(m, path);
  }

  absl::Status CheckStrategy(const v1::StrategySpec& s, const FieldPath& path) const {
    if (!Contains(kStrategies, s.name())) {
      return Error(Append(path, "name"), absl::StrCat("one of ", AllowedNames(kStrategies),
                                                      "; got \"", absl::CEscape(s.name()),
                                                      "\""));
    }
    FLEETMARK_RETURN_IF_ERROR(CheckMax(Append(path, "threads"), s.threads(), kMaxThreads));
    FLEETMARK_RETURN_IF_ERROR(CheckMax(Append(path, "stack_kib"), s.stack_kib(), kMaxStackKib));
    FLEETMARK_RETURN_IF_ERROR(CheckMax(Append(path, "limit"), s.limit(), kMaxThreads));
    const std::string& label = s.label();
    bool label_ok = label.size() <= kMaxLabelLength;
    for (char c : label) label_ok = label_ok && IsLabelChar(c);
    if (!label_ok) {
      return Error(Append(path, "label"),
                   absl::StrCat("at most ", kMaxLabelLength,
                                " letters, digits and _ - . + : (no '/'), got \"",
                                absl::CEscape(label), "\""));
    }
    return absl::OkStatus();
  }

  absl::Status CheckScenario(const v1::Matrix& m, const FieldPath& path) const {
    if (m.has_batch()) {
      FieldPath p = Append(path, "batch");
      return CheckMax(Append(p, "tasks"), m.batch().tasks(), kMaxTasks);
    }
    if (m.has_memory()) {
      FieldPath p = Append(path, "memory");
      const v1::MemoryParams& mem = m.memory();
      for (int i = 0; i < mem.task_counts_size(); ++i) {
        FLEETMARK_RETURN_IF_ERROR(
            CheckRange(Append(p, "task_counts", i), mem.task_counts(i), 1, kMaxMemoryTasks));
      }
      FLEETMARK_RETURN_IF_ERROR(
          CheckMax(Append(p, "touch_stack_kib"), mem.touch_stack_kib(), kMaxTouchStackKib));
      if (mem.task_counts_size() > kMaxMemoryPoints) {
        return Error(Append(p, "task_counts"),
                     absl::StrCat("at most ", kMaxMemoryPoints, " points, got ",
                                  mem.task_counts_size()));
      }
      FLEETMARK_RETURN_IF_ERROR(
          CheckMax(Append(p, "max_memory_mib"), mem.max_memory_mib(), kMaxMemoryMib));
      return CheckMax(Append(p, "point_timeout_seconds"), mem.point_timeout_seconds(),
                      kMaxPointTimeoutSeconds);
    }
    if (m.has_fanout()) {
      FieldPath p = Append(path, "fanout");
      const v1::FanoutParams& f = m.fanout();
      FLEETMARK_RETURN_IF_ERROR(CheckMax(Append(p, "requests"), f.requests(), kMaxFanoutRequests));
      FLEETMARK_RETURN_IF_ERROR(
          CheckMax(Append(p, "calls_per_request"), f.calls_per_request(), kMaxFanoutCalls));
      const uint64_t total = uint64_t{std::max(f.requests(), 1u)} *
                             uint64_t{f.calls_per_request() == 0 ? 5u : f.calls_per_request()};
      if (total > kMaxFanoutTotalCalls) {
        return Error(Append(p, "calls_per_request"),
                     absl::StrCat("requests x calls_per_request <= ", kMaxFanoutTotalCalls,
                                  ", got ", total));
      }
      FLEETMARK_RETURN_IF_ERROR(CheckMax(Append(p, "delay_ms"), f.delay_ms(), kMaxFanoutDelayMs));
      return CheckMax(Append(p, "timeout_ms"), f.timeout_ms(), kMaxFanoutTimeoutMs);
    }
    FieldPath p = Append(path, "load");
    const v1::LoadParams& l = m.load();
    FLEETMARK_RETURN_IF_ERROR(CheckMax(Append(p, "users"), l.users(), kMaxLoadUsers));
    FLEETMARK_RETURN_IF_ERROR(
        CheckMax(Append(p, "ramp_seconds"), l.ramp_seconds(), kMaxLoadRampSeconds));
    FLEETMARK_RETURN_IF_ERROR(
        CheckMax(Append(p, "hold_seconds"), l.hold_seconds(), kMaxLoadHoldSeconds));
    FLEETMARK_RETURN_IF_ERROR(CheckMax(Append(p, "think_ms"), l.think_ms(), kMaxLoadThinkMs));
    FLEETMARK_RETURN_IF_ERROR(CheckMax(Append(p, "objects"), l.objects(), kMaxLoadObjects));
    FLEETMARK_RETURN_IF_ERROR(CheckMax(Append(p, "db_wait_us"), l.db_wait_us(), kMaxLoadDbWaitUs));
    FLEETMARK_RETURN_IF_ERROR(
        CheckMax(Append(p, "client_threads"), l.client_threads(), kMaxLoadClientThreads));
    return CheckMax(Append(p, "request_timeout_ms"), l.request_timeout_ms(),
                    kMaxLoadRequestTimeoutMs);
  }

  absl::Status CheckMeasurement(const v1::MeasurementSettings& s, const FieldPath& path) const {
    FLEETMARK_RETURN_IF_ERROR(
        CheckSeconds(Append(path, "warmup_seconds"), s.warmup_seconds(), kMaxWarmupSeconds));
    const double ci = s.target_ci_percent();
    if (!(std::isfinite(ci) && ci >= 0 && ci <= 100)) {
      return Error(Append(path, "target_ci_percent"),
                   absl::StrCat("0 <= target_ci_percent <= 100 (0 = default 2), got ", ci));
    }
    FLEETMARK_RETURN_IF_ERROR(
        CheckMax(Append(path, "min_repetitions"), s.min_repetitions(), kMaxRepetitionsCap));
    FLEETMARK_RETURN_IF_ERROR(
        CheckMax(Append(path, "max_repetitions"), s.max_repetitions(), kMaxRepetitionsCap));
    FLEETMARK_RETURN_IF_ERROR(CheckSeconds(Append(path, "max_seconds_per_case"),
                                           s.max_seconds_per_case(), kMaxSecondsPerCaseCap));
    FLEETMARK_RETURN_IF_ERROR(CheckMax(Append(path, "rounds"), s.rounds(), kMaxRounds));
    FLEETMARK_RETURN_IF_ERROR(
        CheckMax(Append(path, "cooldown_retries"), s.cooldown_retries(), kMaxCooldownRetries));
    return CheckSeconds(Append(path, "cooldown_seconds"), s.cooldown_seconds(),
                        kMaxCooldownSeconds);
  }

  absl::Status CheckRepetitionOrder(const v1::MeasurementSettings& resolved,
                                    const FieldPath& path) const {
    if (resolved.min_repetitions() <= resolved.max_repetitions()) return absl::OkStatus();
    return Error(Append(path, "min_repetitions"),
                 absl::StrCat("min_repetitions <= max_repetitions (", resolved.max_repetitions(),
                              " after defaults), got ", resolved.min_repetitions()));
  }

  absl::Status CheckCases(const google::protobuf::RepeatedPtrField<v1::Matrix>& matrices,
                          const char* field) const {
    const uint64_t count = CountCases(matrices);
    if (count > kMaxCases) {
      return Error({{field}}, absl::StrCat("at most ", kMaxCases,
                                           " cases after expansion, got ", count));
    }
    std::unordered_map<std::string, std::pair<int, int>> seen;
    for (const ExpandedCase& c : ExpandMatrices(matrices)) {
      auto [it, inserted] =
          seen.emplace(c.spec.case_id(), std::make_pair(c.matrix_index, c.strategy_index));
      if (inserted) continue;
      const FieldPath first = {{field, it->second.first}, {"strategies", it->second.second}};
      return Error({{field, c.matrix_index}, {"strategies", c.strategy_index}},
                   absl::StrCat("case id \"", c.spec.case_id(), "\" repeats ",
                                FormatFieldPath(first),
                                "'s; give one of them a distinct label"));
    }
    return absl::OkStatus();
  }

  const PlanSourceMap* source_map_;
  std::string source_name_;
};

}  // namespace

absl::Status ValidatePlan(const ParsedPlan& parsed) {
  return Validator(parsed.source_map.get(), parsed.source_name).CheckPlan(parsed.plan);
}

absl::Status ValidatePlan(const v1::Plan& plan) { return Validator(nullptr, "").CheckPlan(plan); }

}  // namespace fleetmark::engine
