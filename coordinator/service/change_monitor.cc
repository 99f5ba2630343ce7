#include "coordinator/service/change_monitor.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "coordinator/changes/change_points.h"
#include "coordinator/changes/confirmation.h"
#include "engine/common/log.h"
#include "engine/common/status_macros.h"
#include "engine/report/units.h"

namespace fleetmark::service {
namespace {

std::vector<store::DetectedChange> Detect(const store::ChangeScan& scan) {
  std::vector<store::DetectedChange> out;
  for (const store::CaseSeries& s : scan.series) {
    const auto suspected =
        changes::NewestPointStartsChange(s.medians_ns, changes::FingerprintBreaks(s.fingerprint_hashes), scan.noise);
    if (!suspected) continue;
    out.push_back({s.case_id, suspected->old_level_ns, suspected->new_level_ns, suspected->min_relative_change});
  }
  return out;
}

}  // namespace

absl::Status ValidateChangeMonitorOptions(const ChangeMonitorOptions& options) {
  if (options.confirm_budget_per_agent_per_day < 0 || options.confirm_budget_per_agent_per_day > 1000) {
    return absl::InvalidArgumentError(
        absl::StrCat("--confirm_budget_per_agent_per_day: 0..1000, got ", options.confirm_budget_per_agent_per_day));
  }
  return absl::OkStatus();
}

std::string ConfirmationTag(const std::vector<int64_t>& change_ids) {
  return absl::StrCat("confirmation of change", change_ids.size() == 1 ? " " : "s ", absl::StrJoin(change_ids, ", "));
}

std::string ExactCaseFilter(const std::vector<std::string>& case_ids) {
  std::vector<std::string> quoted;
  for (const std::string& id : case_ids) {
    std::string q;
    for (char c : id) {
      const unsigned char u = static_cast<unsigned char>(c);
      const bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
      if (!word && u < 0x80) q.push_back('\\');
      q.push_back(c);
    }
    quoted.push_back(std::move(q));
  }
  return absl::StrCat("^(?:", absl::StrJoin(quoted, "|"), ")$");
}

ChangeMonitor::ChangeMonitor(store::ChangeStore& store, Dispatcher& dispatcher, const RunBuilder& runs,
                             alerts::AlertWebhook* webhook, ChangeMonitorOptions options)
    : store_(store), dispatcher_(dispatcher), runs_(runs), webhook_(webhook), options_(std::move(options)) {}

void ChangeMonitor::Tick() {
  absl::Status status = absl::OkStatus();
  absl::StatusOr<std::vector<store::SuspectedChanges>> found =
      store_.ScanNightlyRuns(Detect, options_.max_scans_per_tick);
  if (found.ok()) {
    for (const store::SuspectedChanges& f : *found) Confirm(f);
  } else {
    status = found.status();
  }
  absl::StatusOr<std::vector<store::EndedConfirmation>> ended = store_.EndedConfirmations(100);
  if (ended.ok()) {
    for (const store::EndedConfirmation& e : *ended) Decide(e);
  } else if (status.ok()) {
    status = ended.status();
  }
  const std::string error = status.ok() ? "" : std::string(status.message());
  if (!error.empty() && error != last_error_) {
    ::fleetmark::Log(::fleetmark::LogLevel::kWarning, absl::StrCat("confirmed changes: ", error));
  }
  last_error_ = error;
}

void ChangeMonitor::Confirm(const store::SuspectedChanges& found) {
  const std::string what = absl::StrCat(ConfirmationTag(found.change_ids).substr(16), " (",
                                        absl::StrJoin(found.case_ids, ", "), ") on agent ", found.agent_name);
  // The nightly run's plan and quick flag, only the changed cases, on that agent.
  auto build = [&](const v1::Plan& plan, bool quick) -> absl::StatusOr<store::NewRun> {
    return runs_.OnAgent(plan, quick, ExactCaseFilter(found.case_ids), found.agent_id, found.agent_name,
                         ConfirmationTag(found.change_ids), options_.confirmation_expiry);
  };
  v1::RunInfo run;
  absl::StatusOr<std::string> unconfirmed =
      store_.SubmitConfirmation(found, options_.confirm_budget_per_agent_per_day, build, &run);
  if (!unconfirmed.ok()) {
    ::fleetmark::Log(::fleetmark::LogLevel::kWarning,
                     absl::StrCat("confirmed changes: suspected ", what, ": ", unconfirmed.status().message()));
    return;
  }
  if (!unconfirmed->empty()) {
    ::fleetmark::Log(::fleetmark::LogLevel::kInfo, absl::StrCat("suspected ", what, ": unconfirmed: ", *unconfirmed));
    return;
  }
  ::fleetmark::Log(::fleetmark::LogLevel::kInfo,
                   absl::StrCat("suspected ", what, ": confirmation run ", run.run_id(), " submitted"));
  dispatcher_.Wake({found.agent_id});
}

void ChangeMonitor::Decide(const store::EndedConfirmation& ended) {
  const store::ChangeRecord& c = ended.change;
  std::string state = changes::kUnconfirmed;
  std::string reason;
  std::optional<double> median;
  if (ended.job_status == "failed") {
    reason = absl::StartsWith(ended.job_message, "deferred:")
                 ? absl::StrCat("confirmation run ", ended.job_message)
                 : absl::StrCat("confirmation run failed: ", ended.job_message);
  } else if (ended.job_status == "cancelled" || ended.run_status == "cancelled") {
    reason = "confirmation run cancelled";
  } else if (!ended.median_ns || *ended.median_ns <= 0) {
    reason = "confirmation run measured no ok result of the case";
  } else {
    const changes::ChangeVerdict verdict = changes::JudgeConfirmation(c.old_level_ns, c.new_level_ns, *ended.median_ns,
                                                                      c.noise_percent ? *c.noise_percent / 100 : 0);
    state = verdict.state;
    reason = verdict.reason;
    median = ended.median_ns;
  }
  absl::StatusOr<std::optional<store::ChangeRecord>> decided = store_.DecideChange(c.change_id, state, reason, median);
  if (!decided.ok()) {
    ::fleetmark::Log(::fleetmark::LogLevel::kWarning,
                     absl::StrCat("confirmed changes: change ", c.change_id, ": ", decided.status().message()));
    return;
  }
  if (!decided->has_value()) return;  // another coordinator decided it
  ::fleetmark::Log(::fleetmark::LogLevel::kInfo,
                   absl::StrCat("change ", c.change_id, " (", c.case_id, " on agent ", c.agent_name, ", ",
                                report::FormatNanos(c.old_level_ns), " -> ", report::FormatNanos(c.new_level_ns),
                                "): ", state, ": ", reason));
  if (state == changes::kConfirmed && webhook_ != nullptr) {
    webhook_->Post(alerts::ChangeAlertJson(**decided, options_.link_base));
  }
}

}  // namespace fleetmark::service
