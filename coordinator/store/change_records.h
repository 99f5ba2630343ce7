// What the store keeps of confirmed changes (issue 14, item 5; migration 0012): the
// changes, the scan input the coordinator's detection rule reads, and the pending
// confirmations it decides. The rules themselves live in coordinator/changes/ (pure);
// the flow in coordinator/service/change_monitor.h.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace fleetmark::store {

// One change (table `changes`).
struct ChangeRecord {
  int64_t change_id = 0;
  std::string agent_id, agent_name, case_id;
  std::string run_id;     // the nightly run whose point starts the new segment
  std::string result_id;  // that point's result
  double old_level_ns = 0, new_level_ns = 0;
  std::optional<double> noise_percent;  // the agent's noise score at detection
  double min_change_percent = 0;
  std::string state;                             // changes::kSuspected, kConfirmed, kNotReproduced, kUnconfirmed
  std::string reason;                            // why unconfirmed, or the verdict's figures
  std::string confirmation_run_id;               // "" = none submitted
  std::optional<double> confirmation_median_ns;  // when decided by a confirmation
  absl::Time created_at = absl::InfinitePast();
  absl::Time decided_at = absl::InfinitePast();  // InfinitePast = not decided
};

// Which changes ListChanges returns (all conditions hold); newest first.
struct ChangeFilter {
  absl::Time since = absl::InfinitePast();  // created at or after
  std::string agent_name;                   // "" = every agent
  std::string state;                        // "" = every state
  int limit = 1000;                         // 1..10000
};

// The filter of `changes list` / GET /api/v1/changes: since_unix_ns 0 = any time; limit
// 0 = 1000. InvalidArgument naming `state` (not one of changes/confirmation.h's states)
// or `limit` (over 10000).
absl::StatusOr<ChangeFilter> ChangeFilterOf(int64_t since_unix_ns, const std::string& agent_name,
                                            const std::string& state, uint32_t limit);

// The series of one case on one agent up to a scanned nightly run (oldest first): per
// nightly run holding the case, its newest attempt's median (0 = not ok) and the device
// fingerprint hash it was measured under ("" = unknown).
struct CaseSeries {
  std::string case_id;
  std::vector<double> medians_ns;
  std::vector<std::string> fingerprint_hashes;
  std::string newest_result_id;
};

// One (nightly run, agent) to scan.
struct ChangeScan {
  std::string run_id, agent_id, agent_name;
  double noise = 0;  // the agent's noise score as a fraction; 0 = unknown
  std::vector<CaseSeries> series;
};

// What the detection rule found in a scan: one per changed case.
struct DetectedChange {
  std::string case_id;
  double old_level_ns = 0, new_level_ns = 0;
  double min_relative_change = 0;  // 0.03 = 3 %
};
using ChangeDetector = std::function<std::vector<DetectedChange>(const ChangeScan&)>;

// The suspected changes of one scan (they share one confirmation run).
struct SuspectedChanges {
  std::string run_id, agent_id, agent_name;
  std::vector<int64_t> change_ids;
  std::vector<std::string> case_ids;
};

// A suspected change whose confirmation run has ended.
struct EndedConfirmation {
  ChangeRecord change;
  std::string run_status;               // the confirmation run's status
  std::string job_status, job_message;  // its job on the agent
  std::optional<double> median_ns;      // its newest ok median of the case
};

}  // namespace fleetmark::store
