// JSON shapes of the web API (/api/v1/...): agents, runs, case results, comparisons,
// history. Field names are snake_case; times are unix milliseconds (`*_unix_ms`,
// 0 = never); statistics stay in ns. Strings are copied verbatim (the browser escapes
// them when drawing). Pure functions, thread-safe.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "coordinator/http/compare.h"
#include "coordinator/store/web_reader.h"
#include "engine/topology/fingerprint.h"

namespace fleetmark::http {

nlohmann::json AgentJson(const store::WebAgent& agent);
nlohmann::json RunJson(const store::WebRun& run);
// {"name", "cron", "plan_name", "selector", "quick", "filter", "paused",
//  "next_fire_unix_ms", "last_fire_unix_ms", "last_fire_outcome"}.
nlohmann::json ScheduleJson(const store::WebSchedule& schedule);
// `full`: also raw samples, every counter, environment snapshots and CPUs used.
// "threads_text" ("48 of 100") and "cpu_per_rep_text" ("2.40 µs") are the CLI table's
// cells (report::ThreadsText, report::CpuPerRepetitionText): the one formatting rule
// both views show.
nlohmann::json ResultJson(const store::WebResult& result, bool full);
nlohmann::json ComparisonJson(const std::vector<DeviceResults>& devices, const Comparison& comparison);
// The strategy map of each device (engine/report/strategy_map.h, as
// engine/report/strategy_map_json.h writes it) and each crossover across the devices:
//   {"devices": [{"agent_id", "name", "run_id", "emulated", "emulated_left_out",
//                 "map": {"points": [...], "crossovers": [...]}}],
//    "crossovers": [{"group", "param", "fixed", "from", "to",
//                    "devices": [{"agent_id", "name", "low", "high", "estimate"}]}]}
// A crossover is the same across devices when group, parameter, fixed values and the
// two strategies are; in first-seen order.
nlohmann::json StrategyMapsJson(const std::vector<DeviceResults>& devices);

// A fingerprint as {"hash": ..., "fields": [{"field": "kernel", "value": "6.1.0"}, ...]}
// (FingerprintFields' order); null when `fp` has no hash (unknown).
nlohmann::json FingerprintJson(const fleetmark::v1::DeviceFingerprint& fp);
// [{"field", "before", "after"}, ...].
nlohmann::json FingerprintChangesJson(const std::vector<engine::FingerprintChange>& changes);

// "CASE_STATUS_RESOURCE_EXHAUSTED" -> "resource_exhausted" (enum names without prefix).
std::string CaseStatusName(fleetmark::v1::CaseStatus status);
std::string StopReasonName(fleetmark::v1::StopReason reason);

}  // namespace fleetmark::http
