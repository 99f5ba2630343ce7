// One change (store::ChangeRecord) as JSON: what GET /api/v1/changes lists and what the
// alert webhook POSTs (ChangeAlertJson adds links). Fields: change_id, state, reason,
// agent, agent_id, case_id, unit ("ns"), old_level_ns, new_level_ns,
// confirmation_median_ns (null = none), the same three as text with units (old_level,
// new_level, confirmation_median: "1.23 ms"), ratio (new / old), min_change_percent,
// noise_percent (null = unknown), run_id, confirmation_run_id, created_unix_ms,
// decided_unix_ms (null = not decided).
//
// Thread-safety: pure functions.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "coordinator/store/change_records.h"

namespace fleetmark::alerts {

nlohmann::json ChangeJson(const store::ChangeRecord& change);

// ChangeJson plus "links": run, confirmation_run, history (the History page of the case
// on that agent, nightly runs) and api, each `link_base` + the web path (relative when
// link_base is "").
std::string ChangeAlertJson(const store::ChangeRecord& change, const std::string& link_base);

}  // namespace fleetmark::alerts
