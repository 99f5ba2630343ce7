// Run helpers shared by store_jobs.cc and store_schedules.cc (inside one transaction).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <pqxx/pqxx>

#include "coordinator/store/store.h"

namespace fleetmark::store::internal {

// Stores `plan` (binary and text format); returns its plan_id.
std::string InsertPlan(pqxx::work& txn, const v1::Plan& plan);

// Inserts the plan, the run and one job per agent: queued, or already assigned
// (attempt 1, lease now + `lease`, claimed by `coordinator_id`) for the agents in
// `assign_to` that have no assigned/running job. Returns the run id and the
// (job_id, agent_id) pairs assigned, and the run as LoadRun would return it (built from
// the inserted rows, without reading them back). The agents of the queued jobs are
// announced (NotificationKind::kQueued) on commit.
struct InsertedRun {
  std::string run_id;
  std::vector<std::pair<std::string, std::string>> assigned;
  v1::RunInfo info;
};
InsertedRun InsertRun(pqxx::work& txn, const NewRun& run, const std::vector<std::string>& assign_to = {},
                      absl::Duration lease = absl::ZeroDuration(), const std::string& coordinator_id = "");

// InsertRun, then the run as LoadRun returns it.
v1::RunInfo CreateRunInTxn(pqxx::work& txn, const NewRun& run);

// The one read model of a run, for Store::GetRun/ListRuns/CancelRun (LoadRun) and the
// web reader alike: the select list over `runs r` and its parser (10 columns, from 0),
// and the select list over `jobs j JOIN agents a` and its parser (columns from `at`:
// job_id, agent_id, agent name, status, message, attempts, cases_done, cases_total).
// `results` counts cases with a real result, not attempts (ResultCountSql).
std::string RunColumns();
v1::RunInfo RunInfoFromRow(const pqxx::row& row);
std::string JobColumns();
v1::JobInfo JobInfoFromRow(const pqxx::row& row, int at);
// The jobs of a run, in the order every reader lists them.
inline constexpr char kJobsOrder[] = "a.name, j.created_at";

// The run with its jobs and result count; nullopt if unknown.
std::optional<v1::RunInfo> LoadRun(pqxx::work& txn, const std::string& run_id);

// Recomputes the run's status from its jobs (kept 'cancelled' once cancelled).
void RefreshRun(pqxx::work& txn, const std::string& run_id);

// CreateRun's argument checks (InvalidArgument naming the field).
absl::Status ValidateNewRun(const NewRun& run);

}  // namespace fleetmark::store::internal
