// ValidatePlan: names against the registry, numbers against the documented caps.
// Returns the first problem found, as "[file:line:col: ]plan.<path>: <rule>, got <value>".
#include <algorithm>
#include <cmath>
#include <set>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/strings/ascii.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "google/protobuf/stubs/common.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "engine/common/status_macros.h"
#include "engine/common/suggest.h"
#include "engine/common/text.h"
#include "engine/plan/expand_internal.h"
#include "engine/plan/plan.h"
#include "engine/plan/repetition_time.h"
#include "engine/measure/stop_rule.h"
#include "engine/common/registry.h"
#include "engine/strategies/registry.h"
#include "engine/strategies/limits.h"
#include "engine/plan/source_map.h"
#include "engine/plan/sweep.h"
#include "engine/scenarios/param_rules.h"
#include "engine/scenarios/registry.h"
#include "engine/topology/placement_spec.h"
#include "engine/topology/sensor_range.h"
#include "engine/workloads/workload.h"

namespace fleetmark::engine {
namespace {

constexpr size_t kMaxLabelLength = 64;

FieldPath Append(FieldPath path, std::string field, int index = -1) {
  path.push_back({std::move(field), index});
  return path;
}

std::string_view RuleField(const ParamRule<v1::SyntheticParams>& rule) { return rule.field; }

// The names of `table`'s entries, by `name_of` when given.
template <typename Table, typename NameOf>
std::string AllowedNames(const Table& table, NameOf name_of) {
  return absl::StrJoin(table, ", ", [&](std::string* out, const auto& entry) { out->append(name_of(entry)); });
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

// The names of `table`'s entries (by `name_of` when given), for OneOfMessage.
template <typename Table, typename NameOf>
std::vector<std::string> NamesOf(const Table& table, NameOf name_of) {
  std::vector<std::string> names;
  for (const auto& entry : table) names.emplace_back(name_of(entry));
  return names;
}

template <typename Table>
std::vector<std::string> NamesOf(const Table& table) {
  return absl::StrSplit(AllowedNames(table), ", ");
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

// User text inside an error message: printable characters as they are (a CJK name stays
// readable), control bytes and invalid UTF-8 as \xNN (engine/common/text.h).
std::string Quoted(std::string_view text) { return EscapeForTerminal(text); }

bool IsLabelChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == '+' || c == ':';
}

class Validator {
 public:
  Validator(const PlanSourceMap* source_map, const std::string& source_name)
      : source_map_(source_map), source_name_(source_name) {}

  absl::Status CheckPlan(const v1::Plan& plan) {
    // First, so no other message quotes invalid text, and so a plan that protobuf's
    // binary parser would refuse (proto3 strings are UTF-8) is never accepted to be sent.
    FLEETMARK_RETURN_IF_ERROR(CheckUtf8(plan, {}));
    FLEETMARK_RETURN_IF_ERROR(CheckText({{"name"}}, plan.name(), kMaxPlanNameBytes, false));
    FLEETMARK_RETURN_IF_ERROR(CheckText({{"description"}}, plan.description(), kMaxPlanDescriptionBytes, true));
    if (plan.matrix_size() == 0) {
      return Error({{"matrix"}}, "at least one matrix block is required, got 0");
    }
    FLEETMARK_RETURN_IF_ERROR(CheckMatrices(plan.matrix(), "matrix"));
    FLEETMARK_RETURN_IF_ERROR(CheckMatrices(plan.quick_matrix(), "quick_matrix"));
    FLEETMARK_RETURN_IF_ERROR(CheckMeasurement(plan.measurement(), {{"measurement"}}));
    FLEETMARK_RETURN_IF_ERROR(CheckMeasurement(plan.quick(), {{"quick"}}));
    FLEETMARK_RETURN_IF_ERROR(CheckPreconditions(plan.preconditions(), {{"preconditions"}}));
    // The settings each form of the plan actually runs with must be coherent too.
    FLEETMARK_RETURN_IF_ERROR(CheckRepetitionOrder(ResolveMeasurement(plan.measurement()), {{"measurement"}}));
    FLEETMARK_RETURN_IF_ERROR(CheckRepetitionOrder(ResolveMeasurement(ApplyQuick(plan).measurement()), {{"quick"}}));
    FLEETMARK_RETURN_IF_ERROR(CheckCases(plan.matrix(), "matrix"));
    FLEETMARK_RETURN_IF_ERROR(
        CheckEnergy(plan.measurement().energy(), plan.matrix(), "matrix", {{"measurement"}, {"energy"}}));
    FLEETMARK_RETURN_IF_ERROR(CheckEnergy(ApplyQuick(plan).measurement().energy(),
                                          plan.quick_matrix_size() > 0 ? plan.quick_matrix() : plan.matrix(),
                                          plan.quick_matrix_size() > 0 ? "quick_matrix" : "matrix",
                                          {{plan.quick().energy() ? "quick" : "measurement"}, {"energy"}}));
    if (plan.quick_matrix_size() > 0) {
      FLEETMARK_RETURN_IF_ERROR(CheckCases(plan.quick_matrix(), "quick_matrix"));
    }
    FLEETMARK_RETURN_IF_ERROR(
        CheckRepetitionTime(plan.matrix(), "matrix", ResolveMeasurement(plan.measurement()), "measurement"));
    const v1::Plan quick = ApplyQuick(plan);
    FLEETMARK_RETURN_IF_ERROR(CheckRepetitionTime(quick.matrix(),
                                                  plan.quick_matrix_size() > 0 ? "quick_matrix" : "matrix",
                                                  ResolveMeasurement(quick.measurement()), "quick"));
    return absl::OkStatus();
  }

  absl::Status CheckPreconditionsOf(const v1::Preconditions& p) const {
    return CheckPreconditions(p, {{"preconditions"}});
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
    return absl::InvalidArgumentError(absl::StrCat(prefix, FormatFieldPath(path), ": ", detail));
  }

  absl::Status CheckText(const FieldPath& path, const std::string& text, size_t max_bytes, bool allow_newlines) const {
    if (text.size() > max_bytes) {
      return Error(path, absl::StrCat("at most ", max_bytes, " bytes, got ", text.size()));
    }
    if (!IsPrintableText(text, allow_newlines)) {
      const std::optional<std::string> problem = TextProblem(text, allow_newlines);
      return Error(path, absl::StrCat("printable text only (no control characters",
                                      allow_newlines ? " other than newline and tab" : "",
                                      ", no bidirectional controls), got \"", Quoted(text), "\"", problem ? ": " : "",
                                      problem ? *problem : ""));
    }
    return absl::OkStatus();
  }

  // Every string field of `message` (at `path`), recursively, is valid UTF-8: the first
  // that is not is named, its bytes escaped.
  absl::Status CheckUtf8(const google::protobuf::Message& message, const FieldPath& path) const {
    const google::protobuf::Reflection* reflection = message.GetReflection();
    std::vector<const google::protobuf::FieldDescriptor*> fields;
    reflection->ListFields(message, &fields);
    for (const google::protobuf::FieldDescriptor* field : fields) {
      const bool repeated = field->is_repeated();
      const int count = repeated ? reflection->FieldSize(message, field) : 1;
      for (int i = 0; i < count; ++i) {
        const FieldPath at = Append(path, field->name(), repeated ? i : -1);
        if (field->type() == google::protobuf::FieldDescriptor::TYPE_STRING) {
          std::string scratch;
          const std::string& text = repeated ? reflection->GetRepeatedStringReference(message, field, i, &scratch)
                                             : reflection->GetStringReference(message, field, &scratch);
          // protobuf's own check, the one its binary parser applies to proto3 strings.
          if (!google::protobuf::internal::IsStructurallyValidUTF8(text.data(), static_cast<int>(text.size()))) {
            return Error(
                at, absl::StrCat("valid UTF-8 text only, got \"", Quoted(std::string_view(text).substr(0, 200)), "\""));
          }
        } else if (field->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE) {
          FLEETMARK_RETURN_IF_ERROR(CheckUtf8(
              repeated ? reflection->GetRepeatedMessage(message, field, i) : reflection->GetMessage(message, field),
              at));
        }
      }
    }
    return absl::OkStatus();
  }

  absl::Status CheckMax(const FieldPath& path, uint64_t value, uint64_t max) const {
    if (value <= max) return absl::OkStatus();
    return Error(path, absl::StrCat("0 <= ", path.back().field, " <= ", max, ", got ", value));
  }

  absl::Status CheckRange(const FieldPath& path, uint64_t value, uint64_t min, uint64_t max) const {
    if (value >= min && value <= max) return absl::OkStatus();
    return Error(path, absl::StrCat(min, " <= ", path.back().field, " <= ", max, ", got ", value));
  }

  absl::Status CheckSeconds(const FieldPath& path, double value, double max) const {
    if (std::isfinite(value) && value >= 0 && value <= max) return absl::OkStatus();
    return Error(path, absl::StrCat("0 <= ", path.back().field, " <= ", max, " (seconds), got ", value));
  }

  absl::Status CheckMatrices(const google::protobuf::RepeatedPtrField<v1::Matrix>& matrices, const char* field) const {
    for (int i = 0; i < matrices.size(); ++i) {
      FLEETMARK_RETURN_IF_ERROR(CheckMatrix(matrices[i], {{field, i}}));
    }
    return absl::OkStatus();
  }

  absl::Status CheckMatrix(const v1::Matrix& m, const FieldPath& path) const {
    const ScenarioTraits* scenario = FindScenario(m.scenario_case());  // nullptr: SCENARIO_NOT_SET
    if (scenario == nullptr) {
      return Error(path, absl::StrCat("a scenario is required (one of ", AllowedNames(kScenarios), "), got none"));
    }
    if (m.strategies_size() == 0) {
      return Error(Append(path, "strategies"), "at least one strategy is required, got 0");
    }
    for (int i = 0; i < m.strategies_size(); ++i) {
      FLEETMARK_RETURN_IF_ERROR(CheckStrategy(m.strategies(i), Append(path, "strategies", i)));
    }
    for (int i = 0; i < m.workloads_size(); ++i) {
      if (!Contains(kWorkloads, m.workloads(i))) {
        return Error(Append(path, "workloads", i), OneOfMessage(m.workloads(i), NamesOf(kWorkloads)));
      }
    }
    FLEETMARK_RETURN_IF_ERROR(CheckSynthetic(m, path));
    // Only batch runs a workload (the registry's needs_workload); fanout and load refuse
    // one (refuses_workload), memory accepts one as a name (see registry.h).
    if (scenario->needs_workload && m.workloads_size() == 0) {
      return Error(Append(path, "workloads"),
                   absl::StrCat("the ", std::string(scenario->name), " scenario needs at least one workload (",
                                AllowedNames(kWorkloads), "), got 0"));
    }
    if (!scenario->refuses_workload.empty() && m.workloads_size() > 0) {
      return Error(Append(path, "workloads", 0),
                   absl::StrCat("this scenario runs no workload (", std::string(scenario->refuses_workload),
                                "); leave workloads out, got \"", Quoted(m.workloads(0)), "\""));
    }
    for (int i = 0; i < m.io_modes_size(); ++i) {
      if (!Contains(kIoModes, m.io_modes(i))) {
        return Error(Append(path, "io_modes", i), OneOfMessage(m.io_modes(i), NamesOf(kIoModes)));
      }
    }
    for (int i = 0; i < m.placements_size(); ++i) {
      absl::StatusOr<PlacementSpec> spec = ParsePlacement(m.placements(i));
      if (!spec.ok()) return Error(Append(path, "placements", i), spec.status().message());
      // Case ids carry the placement text: only its canonical spelling (no spaces,
      // sorted and merged CPU lists) keeps one placement one case.
      if (m.placements(i) != spec->text) {
        return Error(
            Append(path, "placements", i),
            absl::StrCat("write it as \"", spec->text, "\" (canonical form), got \"", Quoted(m.placements(i)), "\""));
      }
    }
    return CheckScenario(m, path);
  }

  // The synthetic parameters and sweeps: only beside the synthetic workload, each value
  // in its kSyntheticRules range, at most kMaxSweeps distinct parameters of at most
  // kMaxSweepPoints distinct values.
  absl::Status CheckSynthetic(const v1::Matrix& m, const FieldPath& path) const {
    if (!m.has_synthetic() && m.sweeps_size() == 0) return absl::OkStatus();
    if (std::find(m.workloads().begin(), m.workloads().end(), kSyntheticWorkload) == m.workloads().end()) {
      return Error(Append(path, m.has_synthetic() ? "synthetic" : "sweeps", m.has_synthetic() ? -1 : 0),
                   absl::StrCat("set only with the workload \"", kSyntheticWorkload,
                                "\" in workloads (the other workloads take no parameters)"));
    }
    const FieldPath sp = Append(path, "synthetic");
    FLEETMARK_RETURN_IF_ERROR(CheckRules(sp, kSyntheticRules, m.synthetic()));
    const std::string& distribution = m.synthetic().wait_distribution();
    if (!distribution.empty() && !Contains(kWaitDistributions, distribution)) {
      return Error(Append(sp, "wait_distribution"),
                   OneOfMessage(distribution, NamesOf(kWaitDistributions), " (empty = fixed)"));
    }
    if (m.sweeps_size() > kMaxSweeps) {
      return Error(Append(path, "sweeps", kMaxSweeps),
                   absl::StrCat("at most ", kMaxSweeps, " swept parameters, got ", m.sweeps_size()));
    }
    for (int i = 0; i < m.sweeps_size(); ++i) {
      FLEETMARK_RETURN_IF_ERROR(CheckSweep(m, i, Append(path, "sweeps", i)));
    }
    return absl::OkStatus();
  }

  absl::Status CheckSweep(const v1::Matrix& m, int index, const FieldPath& path) const {
    const v1::Sweep& sweep = m.sweeps(index);
    const ParamRule<v1::SyntheticParams>* rule = FindSyntheticRule(sweep.param());
    if (rule == nullptr) {
      return Error(Append(path, "param"), OneOfMessage(sweep.param(), NamesOf(kSyntheticRules, &RuleField)));
    }
    for (int j = 0; j < index; ++j) {
      if (m.sweeps(j).param() == sweep.param()) {
        return Error(Append(path, "param"),
                     absl::StrCat("sweeps[", j, "] already sweeps ", sweep.param(), "; sweep each parameter once"));
      }
    }
    const bool range = sweep.from() != 0 || sweep.to() != 0 || sweep.points() != 0;
    if (sweep.values_size() > 0 && range) {
      return Error(Append(path, "values"), "either values or from/to/points, not both");
    }
    if (sweep.values_size() > 0) {
      if (sweep.values_size() > kMaxSweepPoints) {
        return Error(Append(path, "values"),
                     absl::StrCat("at most ", kMaxSweepPoints, " values, got ", sweep.values_size()));
      }
      for (int k = 0; k < sweep.values_size(); ++k) {
        FLEETMARK_RETURN_IF_ERROR(CheckRange(Append(path, "values", k), sweep.values(k), rule->min, rule->max));
        for (int j = 0; j < k; ++j) {
          if (sweep.values(j) == sweep.values(k)) {
            return Error(Append(path, "values", k),
                         absl::StrCat("repeats values[", j, "] = ", sweep.values(k), "; list each value once"));
          }
        }
      }
      return absl::OkStatus();
    }
    if (!range) return Error(Append(path, "values"), "a list of values or a range (from, to, points) is required");
    FLEETMARK_RETURN_IF_ERROR(
        CheckRange(Append(path, "from"), sweep.from(), std::max<uint32_t>(rule->min, 1), rule->max));
    FLEETMARK_RETURN_IF_ERROR(CheckRange(Append(path, "to"), sweep.to(), uint64_t{sweep.from()} + 1, rule->max));
    FLEETMARK_RETURN_IF_ERROR(CheckRange(Append(path, "points"), sweep.points(), 2, kMaxSweepPoints));
    const std::vector<uint32_t> values = SweepValues(sweep);
    for (size_t k = 1; k < values.size(); ++k) {
      if (values[k] == values[k - 1]) {
        return Error(Append(path, "points"),
                     absl::StrCat(sweep.points(), " log-spaced points from ", sweep.from(), " to ", sweep.to(),
                                  " repeat the value ", values[k],
                                  " after rounding to integers; use fewer points or a wider range"));
      }
    }
    return absl::OkStatus();
  }

  absl::Status CheckStrategy(const v1::StrategySpec& s, const FieldPath& path) const {
    if (!Contains(kStrategies, s.name())) {
      return Error(Append(path, "name"), OneOfMessage(s.name(), NamesOf(kStrategies)));
    }
    FLEETMARK_RETURN_IF_ERROR(CheckMax(Append(path, "threads"), s.threads(), kMaxThreads));
    if (FindStrategy(s.name())->ignores_threads && s.threads() != 0) {
      return Error(Append(path, "threads"), absl::StrCat("must be 0 for ", s.name(),
                                                         " (it ignores threads; see `fleetmark "
                                                         "list`), got ",
                                                         s.threads()));
    }
    if (s.stack_kib() != 0) {
      FLEETMARK_RETURN_IF_ERROR(CheckRange(Append(path, "stack_kib"), s.stack_kib(), kMinStackKib, kMaxStackKib).ok()
                                    ? absl::OkStatus()
                                    : Error(Append(path, "stack_kib"),
                                            absl::StrCat("0 (system default) or ", kMinStackKib,
                                                         " <= stack_kib <= ", kMaxStackKib, ", got ", s.stack_kib())));
    }
    FLEETMARK_RETURN_IF_ERROR(CheckMax(Append(path, "limit"), s.limit(), kMaxThreads));
    const std::string& label = s.label();
    bool label_ok = label.size() <= kMaxLabelLength;
    for (char c : label) label_ok = label_ok && IsLabelChar(c);
    if (!label_ok) {
      return Error(Append(path, "label"),
                   absl::StrCat("at most ", kMaxLabelLength, " letters, digits and _ - . + : (no '/'), got \"",
                                Quoted(label), "\""));
    }
    return absl::OkStatus();
  }

  absl::Status CheckScenario(const v1::Matrix& m, const FieldPath& path) const {
    if (m.has_batch()) {
      FieldPath p = Append(path, "batch");
      return CheckMax(Append(p, "tasks"), m.batch().tasks(), kMaxBatchTasks);
    }
    if (m.has_memory()) {
      FieldPath p = Append(path, "memory");
      const v1::MemoryParams& mem = m.memory();
      for (int i = 0; i < mem.task_counts_size(); ++i) {
        FLEETMARK_RETURN_IF_ERROR(CheckRange(Append(p, "task_counts", i), mem.task_counts(i), 1, kMaxMemoryTasks));
      }
      FLEETMARK_RETURN_IF_ERROR(CheckRules(p, kMemoryRules, mem));
      if (mem.task_counts_size() > kMaxMemoryPoints) {
        return Error(Append(p, "task_counts"),
                     absl::StrCat("at most ", kMaxMemoryPoints, " points, got ", mem.task_counts_size()));
      }
      const std::set<uint32_t> distinct(mem.task_counts().begin(), mem.task_counts().end());
      if (mem.task_counts_size() > 0 && distinct.size() < static_cast<size_t>(kMinMemoryPoints)) {
        return Error(Append(p, "task_counts"),
                     absl::StrCat("empty (the default points) or at least ", kMinMemoryPoints,
                                  " distinct task counts for the KiB/task line fit, got ", distinct.size()));
      }
      for (int i = 0; i < m.strategies_size(); ++i) {
        const uint32_t stack = m.strategies(i).stack_kib();
        if (stack != 0 && uint64_t{mem.touch_stack_kib()} + 8 > stack) {
          return Error(Append(p, "touch_stack_kib"),
                       absl::StrCat("0 <= touch_stack_kib <= strategies[", i, "].stack_kib - 8 = ", stack - 8, ", got ",
                                    mem.touch_stack_kib()));
        }
      }
      return absl::OkStatus();
    }
    if (m.has_fanout()) {
      FieldPath p = Append(path, "fanout");
      const v1::FanoutParams& f = m.fanout();
      FLEETMARK_RETURN_IF_ERROR(CheckRules(p, kFanoutRules, f));
      const uint64_t total = uint64_t{RuleValue(kFanoutRequests, f)} * uint64_t{RuleValue(kFanoutCalls, f)};
      if (total > kMaxFanoutTotalCalls) {
        return Error(Append(p, "calls_per_request"),
                     absl::StrCat("requests x calls_per_request <= ", kMaxFanoutTotalCalls, ", got ", total));
      }
      return absl::OkStatus();
    }
    return CheckRules(Append(path, "load"), kLoadRules, m.load());
  }

  // The first of `rules` (engine/scenarios/param_rules.h) that `params` at `path` breaks.
  template <typename Params, size_t N>
  absl::Status CheckRules(const FieldPath& path, const ParamRule<Params> (&rules)[N], const Params& params) const {
    if (auto broken = FirstBrokenRule(rules, params, RuleForm::kPlan)) {
      return Error(Append(path, broken->field), broken->detail);
    }
    return absl::OkStatus();
  }

  absl::Status CheckMeasurement(const v1::MeasurementSettings& s, const FieldPath& path) const {
    FLEETMARK_RETURN_IF_ERROR(CheckSeconds(Append(path, "warmup_seconds"), s.warmup_seconds(), kMaxWarmupSeconds));
    const double ci = s.target_ci_percent();
    if (!(std::isfinite(ci) && ci >= 0 && ci <= 100)) {
      return Error(Append(path, "target_ci_percent"),
                   absl::StrCat("0 <= target_ci_percent <= 100 (0 = default 2), got ", ci));
    }
    FLEETMARK_RETURN_IF_ERROR(CheckMax(Append(path, "min_repetitions"), s.min_repetitions(), kMaxRepetitionsCap));
    FLEETMARK_RETURN_IF_ERROR(CheckMax(Append(path, "max_repetitions"), s.max_repetitions(), kMaxRepetitionsCap));
    FLEETMARK_RETURN_IF_ERROR(
        CheckSeconds(Append(path, "max_seconds_per_case"), s.max_seconds_per_case(), kMaxSecondsPerCaseCap));
    FLEETMARK_RETURN_IF_ERROR(
        CheckSeconds(Append(path, "min_seconds_per_case"), s.min_seconds_per_case(), kMaxSecondsPerCaseCap));
    FLEETMARK_RETURN_IF_ERROR(CheckMax(Append(path, "rounds"), s.rounds(), kMaxRounds));
    if (s.processes() > kMaxProcesses) {
      return Error(Append(path, "processes"),
                   absl::StrCat("1 <= processes <= ", kMaxProcesses, " (0 = default ", kDefaultProcesses,
                                "; batch cases get at least ", kMinBatchProcesses, "), got ", s.processes()));
    }
    if (s.max_processes() > kMaxProcesses) {
      return Error(Append(path, "max_processes"),
                   absl::StrCat("0 <= max_processes <= ", kMaxProcesses, " (0 = default ", kDefaultMaxProcesses, ", ",
                                kQuickMaxProcesses, " under --quick), got ", s.max_processes()));
    }
    FLEETMARK_RETURN_IF_ERROR(CheckMax(Append(path, "cooldown_retries"), s.cooldown_retries(), kMaxCooldownRetries));
    return CheckSeconds(Append(path, "cooldown_seconds"), s.cooldown_seconds(), kMaxCooldownSeconds);
  }

  absl::Status CheckPreconditions(const v1::Preconditions& p, const FieldPath& path) const {
    // A set double in [min, max] (finite), else "<min> <= <name> <= <max> <unit>, got <value>".
    auto in_range = [&](bool has, const char* name, double value, double min, double max,
                        absl::string_view unit) -> absl::Status {
      if (!has || (std::isfinite(value) && value >= min && value <= max)) return absl::OkStatus();
      auto num = [](double v) { return absl::StrFormat("%.10g", v); };
      return Error(Append(path, name),
                   absl::StrCat(num(min), " <= ", name, " <= ", num(max), unit, ", got ", num(value)));
    };
    using topology_internal::kBatteryLevelRange;
    using topology_internal::kTemperatureRange;
    FLEETMARK_RETURN_IF_ERROR(in_range(p.has_min_battery_percent(), "min_battery_percent", p.min_battery_percent(), 1,
                                       kBatteryLevelRange.max, " (%)"));
    FLEETMARK_RETURN_IF_ERROR(in_range(p.has_max_temperature_c(), "max_temperature_c", p.max_temperature_c(),
                                       kTemperatureRange.min, kTemperatureRange.max, " (°C)"));
    FLEETMARK_RETURN_IF_ERROR(
        in_range(p.has_max_other_cpu_percent(), "max_other_cpu_percent", p.max_other_cpu_percent(), 0, 100, " (%)"));
    FLEETMARK_RETURN_IF_ERROR(
        in_range(p.has_max_load_average(), "max_load_average", p.max_load_average(), 0, kMaxGateLoadAverage, ""));
    if (p.has_required_governor()) {
      const std::string& g = p.required_governor();
      const bool ok = !g.empty() && g.size() <= kMaxGovernorLength && std::all_of(g.begin(), g.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
      });
      if (!ok) {
        return Error(Append(path, "required_governor"),
                     absl::StrCat("[a-z0-9_]{1,", kMaxGovernorLength,
                                  "} (a cpufreq governor, e.g. performance), got \"", Quoted(g), "\""));
      }
    }
    FLEETMARK_RETURN_IF_ERROR(in_range(p.has_min_free_memory_mib(), "min_free_memory_mib",
                                       static_cast<double>(p.min_free_memory_mib()), 1,
                                       static_cast<double>(kMaxGateFreeMemoryMib), " (MiB)"));
    FLEETMARK_RETURN_IF_ERROR(in_range(p.has_cooldown_seconds(), "cooldown_seconds", p.cooldown_seconds(), 0,
                                       kMaxCooldownSeconds, " (seconds)"));
    FLEETMARK_RETURN_IF_ERROR(in_range(p.has_max_checks(), "max_checks", p.max_checks(), 1, kMaxGateChecks, ""));
    return in_range(p.has_cpu_sample_seconds(), "cpu_sample_seconds", p.cpu_sample_seconds(), kMinGateCpuSampleSeconds,
                    kMaxGateCpuSampleSeconds, " (seconds)");
  }

  absl::Status CheckRepetitionOrder(const v1::MeasurementSettings& resolved, const FieldPath& path) const {
    if (resolved.min_seconds_per_case() > resolved.max_seconds_per_case()) {
      return Error(Append(path, "min_seconds_per_case"),
                   absl::StrCat("min_seconds_per_case <= max_seconds_per_case (", resolved.max_seconds_per_case(),
                                " after defaults), got ", resolved.min_seconds_per_case()));
    }
    if (resolved.min_repetitions() <= resolved.max_repetitions()) return absl::OkStatus();
    return Error(Append(path, "min_repetitions"),
                 absl::StrCat("min_repetitions <= max_repetitions (", resolved.max_repetitions(),
                              " after defaults), got ", resolved.min_repetitions()));
  }

  // measurement.energy measures batch cases only (docs/energy.md): a plan asking for it
  // without one would measure nothing and say nothing.
  absl::Status CheckEnergy(bool energy, const google::protobuf::RepeatedPtrField<v1::Matrix>& matrices,
                           const char* field, const FieldPath& path) const {
    if (!energy) return absl::OkStatus();
    for (const v1::Matrix& m : matrices) {
      if (m.has_batch()) return absl::OkStatus();
    }
    return Error(path, absl::StrCat("true needs a batch matrix (energy is measured for batch cases only; memory, "
                                    "fanout and load cases have none), got none in ",
                                    field));
  }

  absl::Status CheckCases(const google::protobuf::RepeatedPtrField<v1::Matrix>& matrices, const char* field) const {
    const uint64_t count = CountCases(matrices);
    if (count > kMaxCases) {
      return Error({{field}}, absl::StrCat("at most ", kMaxCases, " cases after expansion, got ", count));
    }
    std::unordered_map<std::string, ExpandedCase> seen;
    for (ExpandedCase& c : ExpandMatrices(matrices)) {
      auto [it, inserted] = seen.emplace(c.spec.case_id(), c);
      if (!inserted) return DuplicateCase(field, it->second, c);
    }
    return absl::OkStatus();
  }

  // Names the list element that makes `second` repeat `first`'s case id: the first
  // dimension (matrix, workload, io mode, strategy, placement) where they differ.
  absl::Status DuplicateCase(const char* field, const ExpandedCase& first, const ExpandedCase& second) const {
    const FieldPath first_matrix = {{field, first.matrix_index}};
    const FieldPath second_matrix = {{field, second.matrix_index}};
    FieldPath a, b;
    std::string hint;
    if (first.matrix_index != second.matrix_index) {
      a = first_matrix;
      b = second_matrix;
      hint = "drop one of them or give the strategy a distinct label";
    } else if (first.workload_index != second.workload_index) {
      a = Append(first_matrix, "workloads", first.workload_index);
      b = Append(second_matrix, "workloads", second.workload_index);
      hint = "list each workload once";
    } else if (first.io_mode_index != second.io_mode_index) {
      a = Append(first_matrix, "io_modes", first.io_mode_index);
      b = Append(second_matrix, "io_modes", second.io_mode_index);
      hint = "list each io mode once";
    } else if (first.strategy_index != second.strategy_index) {
      a = Append(first_matrix, "strategies", first.strategy_index);
      b = Append(second_matrix, "strategies", second.strategy_index);
      hint = "give one of them a distinct label";
    } else {
      a = Append(first_matrix, "placements", first.placement_index);
      b = Append(second_matrix, "placements", second.placement_index);
      hint = "list each placement once";
    }
    return Error(b, absl::StrCat("repeats ", FormatFieldPath(a), " (both give case id \"", second.spec.case_id(),
                                 "\"); ", hint));
  }

  // One repetition cannot be interrupted (the strategy runs the whole batch), so its
  // shortest possible time must fit the case's budget, or at least kMaxOverrunSeconds:
  // a plan may let one slow repetition exceed a small budget (--quick), not run for
  // hours with no way to stop it but killing the process.
  absl::Status CheckRepetitionTime(const google::protobuf::RepeatedPtrField<v1::Matrix>& matrices, const char* field,
                                   const v1::MeasurementSettings& settings, const char* settings_field) const {
    const double limit_seconds = std::max(settings.max_seconds_per_case(), kMaxRepetitionOverrunSeconds);
    for (int mi = 0; mi < matrices.size(); ++mi) {
      const v1::Matrix& m = matrices[mi];
      if (!m.has_batch()) continue;
      const uint32_t tasks = m.batch().tasks() == 0 ? kDefaultBatchTasks : m.batch().tasks();
      for (const std::string& workload_name : m.workloads()) {
        // Synthetic: every sweep point (its waits do not depend on cpu_ns, which is left
        // out so validation never calibrates).
        for (const v1::SyntheticParams& point :
             workload_name == kSyntheticWorkload ? SweepPoints(m) : std::vector<v1::SyntheticParams>{{}}) {
          v1::SyntheticParams waits_only = point;
          waits_only.set_cpu_ns(0);
          absl::StatusOr<std::unique_ptr<Workload>> workload = MakeWorkload(workload_name, waits_only);
          if (!workload.ok()) continue;  // reported by CheckMatrix
          const std::string shown = workload_name == kSyntheticWorkload
                                        ? SyntheticWorkloadText(point, {}, /*with_swept=*/true)
                                        : workload_name;
          const std::vector<std::string> io_modes =
              m.io_modes().empty() ? std::vector<std::string>{"blocking"}
                                   : std::vector<std::string>(m.io_modes().begin(), m.io_modes().end());
          for (const std::string& io_mode : io_modes) {
            for (const v1::StrategySpec& strategy : m.strategies()) {
              const uint64_t concurrency = MaxConcurrentTasks(strategy, io_mode, tasks);
              const absl::Duration shortest = MinWaitTime(**workload, tasks, concurrency);
              if (shortest <= absl::Seconds(limit_seconds)) continue;
              return Error(
                  {{field, mi}, {"batch"}, {"tasks"}},
                  absl::StrCat("one repetition of ", shown, "/", io_mode, "/", StrategyLabel(strategy), " with ", tasks,
                               " tasks waits at least ", absl::FormatDuration(absl::Trunc(shortest, absl::Seconds(1))),
                               " (its waits over at most ", concurrency, " concurrent tasks), more than max(",
                               settings_field, ".max_seconds_per_case, ", kMaxRepetitionOverrunSeconds,
                               " s) = ", limit_seconds, " s; use fewer tasks or more threads, or raise ",
                               settings_field, ".max_seconds_per_case"));
            }
          }
        }
      }
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

bool HasGates(const v1::Preconditions& p) {
  return p.has_min_battery_percent() || p.has_max_temperature_c() || p.has_max_other_cpu_percent() ||
         p.has_max_load_average() || p.has_required_governor() || p.has_min_free_memory_mib();
}

absl::Status ValidatePreconditions(const v1::Preconditions& preconditions, std::string_view field) {
  absl::Status status = Validator(nullptr, "").CheckPreconditionsOf(preconditions);
  if (status.ok()) return status;
  // The validator names the field "plan.preconditions.<name>"; give the caller's prefix.
  std::string message(status.message());
  absl::string_view rest = message;
  absl::ConsumePrefix(&rest, "plan.preconditions");
  return absl::InvalidArgumentError(absl::StrCat(std::string(field), rest));
}

}  // namespace fleetmark::engine
