// CheckResultsDocument (results_check.h).
#include "engine/report/results_check.h"

#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/common/status_macros.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "engine/common/text.h"
#include "engine/scenarios/param_rules.h"
#include "engine/strategies/limits.h"

namespace fleetmark::report {
namespace {

// "<lo> <= <name> <= <hi> (<unit>), got <value>" when `value` is outside, else nullopt.
std::optional<std::string> OutOfRange(std::string_view name, double value, double lo, double hi,
                                      std::string_view unit) {
  if (std::isfinite(value) && value >= lo && value <= hi) return std::nullopt;
  std::string out = absl::StrCat(lo, " <= ");
  out.append(name).append(" <= ").append(absl::StrCat(hi));
  if (!unit.empty()) out.append(" (").append(unit).append(")");
  return out.append(", got ").append(absl::StrCat(value));
}

// The first broken rule of one case as "<field path>: <rule>", or nullopt.
std::optional<std::string> CaseProblem(const v1::CaseResult& r) {
  // The times a measurement reports, within kMaxResultNs (CheckResultValues checks that
  // every other statistic is finite).
  const v1::Statistics& s = r.stats();
  const std::pair<const char*, double> times[] = {
      {"min_ns", s.min_ns()}, {"median_ns", s.median_ns()}, {"max_ns", s.max_ns()}, {"mean_ns", s.mean_ns()}};
  for (const auto& [name, value] : times) {
    if (auto bad = OutOfRange(name, value, 0, kMaxResultNs, "ns")) return absl::StrCat("stats.", name, ": ", *bad);
  }
  for (int i = 0; i < r.samples_ns_size(); ++i) {
    if (auto bad = OutOfRange("samples_ns", static_cast<double>(r.samples_ns(i)), 0, kMaxResultNs, "ns")) {
      return absl::StrCat("samples_ns[", i, "]: ", *bad);
    }
  }
  for (int i = 0; i < r.process_medians_ns_size(); ++i) {
    if (auto bad = OutOfRange("process_medians_ns", r.process_medians_ns(i), 0, kMaxResultNs, "ns")) {
      return absl::StrCat("process_medians_ns[", i, "]: ", *bad);
    }
  }
  const v1::CaseSpec& spec = r.spec();
  if (auto bad = OutOfRange("threads", spec.strategy().threads(), 0, engine::kMaxThreads, "")) {
    return absl::StrCat("spec.strategy.threads: ", *bad);
  }
  if (spec.has_batch()) {
    if (auto bad = OutOfRange("tasks", spec.batch().tasks(), 0, engine::kMaxBatchTasks, "")) {
      return absl::StrCat("spec.batch.tasks: ", *bad);
    }
  }
  if (auto broken = engine::FirstBrokenRule(engine::kSyntheticRules, spec.synthetic(), engine::RuleForm::kPlan)) {
    return absl::StrCat("spec.synthetic.", broken->field, ": ", broken->detail);
  }
  if (spec.has_memory()) {
    if (auto broken = engine::FirstBrokenRule(engine::kMemoryRules, spec.memory(), engine::RuleForm::kPlan)) {
      return absl::StrCat("spec.memory.", broken->field, ": ", broken->detail);
    }
  }
  if (spec.has_fanout()) {
    if (auto broken = engine::FirstBrokenRule(engine::kFanoutRules, spec.fanout(), engine::RuleForm::kPlan)) {
      return absl::StrCat("spec.fanout.", broken->field, ": ", broken->detail);
    }
  }
  if (spec.has_load()) {
    if (auto broken = engine::FirstBrokenRule(engine::kLoadRules, spec.load(), engine::RuleForm::kPlan)) {
      return absl::StrCat("spec.load.", broken->field, ": ", broken->detail);
    }
  }
  return std::nullopt;
}

// InvalidArgument naming `path`.field unless every double/float field of `message`
// (recursively) is finite, and >= 0 when `non_negative`; `may_be_infinite` (if not
// null) may also be +Infinity.
absl::Status CheckFloats(const google::protobuf::Message& message, const std::string& path, bool non_negative,
                         const google::protobuf::FieldDescriptor* may_be_infinite = nullptr) {
  const google::protobuf::Reflection* reflection = message.GetReflection();
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  for (const google::protobuf::FieldDescriptor* field : fields) {
    const std::string name = absl::StrCat(path, ".", field->name());
    const int count = field->is_repeated() ? reflection->FieldSize(message, field) : 1;
    for (int i = 0; i < count; ++i) {
      const std::string at = field->is_repeated() ? absl::StrCat(name, "[", i, "]") : name;
      double value = 0;
      switch (field->cpp_type()) {
        case google::protobuf::FieldDescriptor::CPPTYPE_DOUBLE:
          value = field->is_repeated() ? reflection->GetRepeatedDouble(message, field, i)
                                       : reflection->GetDouble(message, field);
          break;
        case google::protobuf::FieldDescriptor::CPPTYPE_FLOAT:
          value = field->is_repeated() ? reflection->GetRepeatedFloat(message, field, i)
                                       : reflection->GetFloat(message, field);
          break;
        case google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE: {
          const google::protobuf::Message& child = field->is_repeated()
                                                       ? reflection->GetRepeatedMessage(message, field, i)
                                                       : reflection->GetMessage(message, field);
          if (absl::Status s = CheckFloats(child, at, non_negative, may_be_infinite); !s.ok()) return s;
          continue;
        }
        default:
          continue;
      }
      if (field == may_be_infinite && value == std::numeric_limits<double>::infinity()) continue;
      if (!std::isfinite(value) || (non_negative && value < 0)) {
        return absl::InvalidArgumentError(
            absl::StrCat(at, non_negative ? ": a finite number >= 0, got " : ": a finite number, got ", value));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckResultValues(const v1::CaseResult& result) {
  // Enums by number: a file's or an agent's unknown number is no status this fleetmark has.
  if (!v1::CaseStatus_IsValid(result.status())) {
    return absl::InvalidArgumentError(
        absl::StrCat("result.status: one of the CaseStatus names (docs/results-schema.md), got ",
                     static_cast<int>(result.status())));
  }
  if (!v1::StopReason_IsValid(result.stop_reason())) {
    return absl::InvalidArgumentError(
        absl::StrCat("result.stop_reason: one of the StopReason names (docs/results-schema.md), got ",
                     static_cast<int>(result.stop_reason())));
  }
  // ci_half_width_percent is +Infinity while the CI is not achieved (under 6 samples:
  // engine/measure/statistics.h); every other statistic is a finite ns value or percent.
  if (absl::Status s = CheckFloats(result.stats(), "result.stats", /*non_negative=*/true,
                                   v1::Statistics::descriptor()->FindFieldByName("ci_half_width_percent"));
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckFloats(result.counters(), "result.counters", false); !s.ok()) return s;
  if (result.has_memory()) {
    if (absl::Status s = CheckFloats(result.memory(), "result.memory", false); !s.ok()) return s;
  }
  if (result.has_fanout()) {
    if (absl::Status s = CheckFloats(result.fanout(), "result.fanout", false); !s.ok()) return s;
  }
  if (result.has_load()) {
    if (absl::Status s = CheckFloats(result.load(), "result.load", false); !s.ok()) return s;
  }
  // Energy: every number finite (a net energy may be negative: below the idle baseline).
  if (result.has_energy()) {
    if (absl::Status s = CheckFloats(result.energy(), "result.energy", false); !s.ok()) return s;
  }
  for (int i = 0; i < result.samples_ns_size(); ++i) {
    if (result.samples_ns(i) < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("result.samples_ns[", i, "]: a duration >= 0 ns, got ", result.samples_ns(i)));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckResultsDocument(const v1::ResultsDocument& document) {
  for (int d = 0; d < document.devices_size(); ++d) {
    const v1::ResultsDevice& device = document.devices(d);
    std::set<std::string> seen;
    for (int i = 0; i < device.results_size(); ++i) {
      const v1::CaseResult& result = device.results(i);
      // A result without its case would be shown under invented defaults (batch,
      // blocking, n=100): it names no case, so it is refused by its position.
      if (!result.has_spec() || result.spec().case_id().empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "devices[", d, "].results[", i, "].", result.has_spec() ? "spec.case_id" : "spec", ": missing (device \"",
            EscapeForTerminal(device.agent()),
            "\"; every result names its case: spec.case_id, e.g. \"batch/arithmetic/blocking/direct/any\", and "
            "the spec it was measured with)"));
      }
      const std::string where = absl::StrCat("device \"", EscapeForTerminal(device.agent()), "\", case \"",
                                             EscapeForTerminal(result.spec().case_id()), "\": ");
      if (!seen.insert(result.spec().case_id()).second) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, "spec.case_id: each case at most once per device, got it twice"));
      }
      if (std::optional<std::string> problem = CaseProblem(result)) {
        return absl::InvalidArgumentError(absl::StrCat(where, *problem));
      }
      // Every result fleetmark writes has a status; protobuf's JSON reader turns a status
      // name it does not know ("CASE_STATUS_BOGUS") into the unspecified 0, silently.
      if (result.status() == v1::CASE_STATUS_UNSPECIFIED) {
        return absl::InvalidArgumentError(absl::StrCat(
            where,
            "status: one of CASE_STATUS_OK, _UNSUPPORTED, _RESOURCE_EXHAUSTED, _TIMEOUT, _FAILED, _CANCELLED "
            "(docs/results-schema.md), got none or a name this fleetmark does not know"));
      }
      if (absl::Status values = CheckResultValues(result); !values.ok()) {
        // "result.stats.ci_high_ns: ..." -> "stats.ci_high_ns: ...", as CaseProblem names fields.
        std::string message(values.message());
        if (message.rfind("result.", 0) == 0) message.erase(0, 7);
        return absl::InvalidArgumentError(absl::StrCat(where, message));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace fleetmark::report
