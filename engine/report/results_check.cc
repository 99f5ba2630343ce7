// CheckResultsDocument (results_check.h).
#include "engine/report/results_check.h"

#include <cmath>
#include <optional>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
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
  // The times a measurement reports (the spread and CI fields may be infinite with few
  // samples, and are not checked).
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

}  // namespace

absl::Status CheckResultsDocument(const v1::ResultsDocument& document) {
  for (const v1::ResultsDevice& device : document.devices()) {
    std::set<std::string> seen;
    for (const v1::CaseResult& result : device.results()) {
      const std::string where = absl::StrCat("device \"", EscapeForTerminal(device.agent()), "\", case \"",
                                             EscapeForTerminal(result.spec().case_id()), "\": ");
      // An empty id (test reports, hand-made files) names no case, so it repeats freely.
      if (!result.spec().case_id().empty() && !seen.insert(result.spec().case_id()).second) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, "spec.case_id: each case at most once per device, got it twice"));
      }
      if (std::optional<std::string> problem = CaseProblem(result)) {
        return absl::InvalidArgumentError(absl::StrCat(where, *problem));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace fleetmark::report
