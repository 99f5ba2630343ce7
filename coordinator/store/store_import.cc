// PgStore::ImportResults: `fleetmark results import` (store.h; the shared rules are
// result_import.h).
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "coordinator/store/pg_store.h"
#include "coordinator/store/result_import.h"
#include "coordinator/store/result_rows.h"
#include "coordinator/store/store_internal.h"
#include "coordinator/store/store_runs.h"
#include "engine/common/status_macros.h"

namespace fleetmark::store {

absl::StatusOr<ImportOutcome> PgStore::ImportResults(const v1::ResultsDocument& document,
                                                     const std::string& submitted_by) {
  FLEETMARK_RETURN_IF_ERROR(internal::CheckImport(document, submitted_by));
  std::vector<std::string> ids;
  for (const v1::ResultsDevice& device : document.devices()) {
    for (const v1::CaseResult& r : device.results()) ids.push_back(absl::AsciiStrToLower(r.result_id()));
  }
  return internal::InTransactionOr(*pool_, "import results", [&](pqxx::work& txn) -> absl::StatusOr<ImportOutcome> {
    // One import at a time: two imports of one file store its results once, in one run.
    txn.exec("SELECT pg_advisory_xact_lock(hashtextextended('fleetmark results import', 0))");
    std::set<std::string> stored;
    for (const auto& row : txn.exec_params("SELECT result_id::text FROM case_results WHERE result_id = ANY($1::uuid[])",
                                           internal::UuidArray(ids))) {
      stored.insert(row[0].as<std::string>());
    }
    ImportOutcome outcome;
    const std::vector<std::vector<int>> fresh = internal::NewImportResults(document, stored, &outcome);
    if (outcome.stored == 0) return outcome;

    std::vector<internal::ImportCandidate> candidates;
    std::set<std::string> names;
    for (const auto& row : txn.exec("SELECT agent_id::text, name, host, imported FROM agents WHERE removed_at IS NULL "
                                    "ORDER BY created_at, agent_id")) {
      internal::ImportCandidate& c = candidates.emplace_back();
      c.agent_id = row[0].as<std::string>();
      c.name = row[1].as<std::string>();
      internal::ParseProtoField(row[2], &c.host);
      c.imported = row[3].as<bool>();
      names.insert(c.name);
    }
    const absl::Time now = absl::FromUnixNanos(txn.exec("SELECT " + internal::UnixNs("now()"))[0][0].as<int64_t>());
    const internal::ImportTimes times = internal::ImportRunTimes(document.run(), now);
    const std::string created_at = internal::TimeParam(times.created);
    v1::Plan plan;
    plan.set_name(document.run().plan_name());
    const std::string plan_id = internal::InsertPlan(txn, plan);
    const std::string run_id =
        txn.exec_params(
               "INSERT INTO runs (run_id, plan_id, plan_name, status, quick, submitted_by, created_at, finished_at,"
               " imported) VALUES (gen_random_uuid(), $1::uuid, $2, 'done', $3, $4, $5::timestamptz, $6::timestamptz,"
               " true) RETURNING run_id::text",
               plan_id, plan.name(), document.run().quick(), submitted_by, created_at,
               internal::TimeParam(times.finished))[0][0]
            .as<std::string>();
    outcome.run_id = run_id;

    std::vector<v1::CaseResult> rows;
    std::vector<std::string> row_agents;
    std::vector<bool> row_emulated;
    internal::AssignImportAgents(
        document, fresh, &candidates, &names,
        [&](const v1::ResultsDevice& device, const std::string& name) {
          const v1::HostInfo& host = device.host();
          return txn
              .exec_params(
                  "INSERT INTO agents (agent_id, name, credential_sha256, host, arch, cpu_model, logical_cpus,"
                  " physical_cores, engine_version, state, emulated, imported) "
                  "VALUES (gen_random_uuid(), $1, '', $2, $3, $4, $5, $6, $7, 'offline', $8, true) "
                  "RETURNING agent_id::text",
                  name, internal::ProtoParam(host), host.arch(), host.cpu_model(),
                  static_cast<int64_t>(host.logical_cpus()), static_cast<int64_t>(host.physical_cores()),
                  host.engine_version(), host.emulated())[0][0]
              .as<std::string>();
        },
        &outcome);
    for (int i = 0; i < document.devices_size(); ++i) {
      if (fresh[i].empty()) continue;
      const v1::ResultsDevice& device = document.devices(i);
      const std::string& agent_id = outcome.devices[i].agent_id;
      const int64_t count = static_cast<int64_t>(fresh[i].size());
      const std::string job_id =
          txn.exec_params(
                 "INSERT INTO jobs (job_id, run_id, agent_id, status, attempts, max_attempts, cases_done, cases_total,"
                 " created_at, updated_at, finished_at) VALUES (gen_random_uuid(), $1::uuid, $2::uuid, 'done', 1, 1,"
                 " $3, $3, $4::timestamptz, $4::timestamptz, $5::timestamptz) RETURNING job_id::text",
                 run_id, agent_id, count, created_at, internal::TimeParam(times.finished))[0][0]
              .as<std::string>();
      for (int j : fresh[i]) {
        rows.push_back(internal::ImportedResult(device.results(j), run_id, job_id));
        row_agents.push_back(agent_id);
        row_emulated.push_back(device.host().emulated());
      }
    }
    internal::CopyResultRows(txn, "case_results", rows.size(), [&](size_t k) {
      return internal::ResultCopyFields(rows[k], run_id, row_agents[k], row_emulated[k], created_at);
    });
    return outcome;
  });
}

}  // namespace fleetmark::store
