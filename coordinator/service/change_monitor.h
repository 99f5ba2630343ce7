// Confirmed changes (issue 14, item 5), driven by the coordinator's sweep: scans nightly
// runs that ended for points that start a change segment (coordinator/changes/), submits
// one confirmation run of just the changed cases on that agent (built by the RunBuilder
// that builds submitted and scheduled runs, run_builder.h), and decides each change
// from it (confirmed / not_reproduced / unconfirmed: <why>), POSTing confirmed ones to
// the alert webhook. Everything it decides is in the database (migration 0012), claimed
// there, so several coordinators on one database scan and decide each change once.
//
//   ChangeMonitor monitor(store, dispatcher, runs, webhook.get(), ChangeMonitorOptions{});
//   monitor.Tick();  // from the sweep thread, every sweep
//
// Thread-safety: Tick from one thread at a time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "coordinator/alerts/alert_webhook.h"
#include "coordinator/service/dispatcher.h"
#include "coordinator/service/run_builder.h"
#include "coordinator/store/change_store.h"

namespace fleetmark::service {

struct ChangeMonitorOptions {
  // Confirmation runs per agent in any 24 hours (--confirm_budget_per_agent_per_day,
  // 0..1000; 0 = never confirm: every change stays unconfirmed).
  int confirm_budget_per_agent_per_day = 4;
  // A confirmation job its agent did not take within this fails as infrastructure
  // (expired), and its changes become unconfirmed.
  absl::Duration confirmation_expiry = absl::Hours(6);
  // (nightly run, agent) pairs scanned per Tick.
  int max_scans_per_tick = 20;
  // Prefix of the links in webhook bodies, e.g. "http://127.0.0.1:8080" ("" = relative).
  std::string link_base;
};

// InvalidArgument naming --confirm_budget_per_agent_per_day unless it is 0..1000.
absl::Status ValidateChangeMonitorOptions(const ChangeMonitorOptions& options);

// The submitted_by tag of a confirmation run: "confirmation of change 7",
// "confirmation of changes 7, 8".
std::string ConfirmationTag(const std::vector<int64_t>& change_ids);

// The run filter selecting exactly `case_ids` (RE2: ^(?:a|b)$, each id quoted).
std::string ExactCaseFilter(const std::vector<std::string>& case_ids);

class ChangeMonitor {
 public:
  // References (and `webhook`, null = none) must outlive the monitor. `runs` builds the
  // confirmation runs (RunBuilder::OnAgent; its max_attempts per confirmation job).
  ChangeMonitor(store::ChangeStore& store, Dispatcher& dispatcher, const RunBuilder& runs,
                alerts::AlertWebhook* webhook, ChangeMonitorOptions options);

  // One pass: scan, submit confirmations, decide ended ones. Errors are logged (one line
  // per failing step) and retried at the next Tick.
  void Tick();

 private:
  void Confirm(const store::SuspectedChanges& found);
  void Decide(const store::EndedConfirmation& ended);

  store::ChangeStore& store_;
  Dispatcher& dispatcher_;
  const RunBuilder& runs_;
  alerts::AlertWebhook* const webhook_;
  const ChangeMonitorOptions options_;
  std::string last_error_;  // logged once until it changes
};

}  // namespace fleetmark::service
