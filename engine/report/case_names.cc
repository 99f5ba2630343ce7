#include "engine/report/case_names.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "engine/common/synthetic_text.h"
#include "engine/scenarios/registry.h"

namespace fleetmark::report {
namespace {

constexpr uint32_t kDefaultBatchTasks = 100;  // plan.proto BatchParams.tasks

// Lower-cased enum value name without its prefix, or "" for unknown values.
std::string EnumWord(const std::string& name, absl::string_view prefix) {
  absl::string_view word = name;
  if (!absl::ConsumePrefix(&word, prefix)) return "";
  return absl::AsciiStrToLower(word);
}

}  // namespace

std::string StrategyLabel(const fleetmark::v1::CaseSpec& spec) {
  const fleetmark::v1::StrategySpec& s = spec.strategy();
  if (!s.label().empty()) return s.label();
  if (s.name().empty()) return "?";
  if (s.threads() == 0) return s.name();
  return absl::StrCat(s.name(), "_", s.threads());
}

std::string WorkloadText(const fleetmark::v1::CaseSpec& spec) {
  if (!spec.has_synthetic()) return spec.workload();
  const std::vector<std::string> swept(spec.swept().begin(), spec.swept().end());
  return engine::SyntheticWorkloadText(spec.synthetic(), swept, /*with_swept=*/true);
}

std::string CaseKey(const fleetmark::v1::CaseSpec& spec) {
  if (!spec.case_id().empty()) return spec.case_id();
  auto part = [](const std::string& s) { return s.empty() ? std::string("-") : s; };
  return absl::StrJoin(
      {part(spec.scenario()), part(spec.workload()), part(spec.io_mode()), StrategyLabel(spec), part(spec.placement())},
      "/");
}

std::string StatusWord(fleetmark::v1::CaseStatus status) {
  std::string word = EnumWord(fleetmark::v1::CaseStatus_Name(status), "CASE_STATUS_");
  return word.empty() ? absl::StrCat("status ", static_cast<int>(status)) : word;
}

std::string StopReasonWord(fleetmark::v1::StopReason reason) {
  std::string word = EnumWord(fleetmark::v1::StopReason_Name(reason), "STOP_REASON_");
  return word.empty() ? absl::StrCat("reason ", static_cast<int>(reason)) : word;
}

uint32_t BatchTasks(const fleetmark::v1::CaseSpec& spec) {
  if (spec.params_case() != fleetmark::v1::CaseSpec::kBatch) {
    return engine::IsBatch(spec) ? kDefaultBatchTasks : 0;
  }
  return spec.batch().tasks() == 0 ? kDefaultBatchTasks : spec.batch().tasks();
}

}  // namespace fleetmark::report
