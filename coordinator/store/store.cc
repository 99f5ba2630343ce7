// PgStore: opening and migrations. Enrollment tokens, agents, jobs/results and schedules
// live in store_tokens.cc, store_agents.cc, store_jobs.cc and store_schedules.cc.
#include "coordinator/store/pg_store.h"

#include "coordinator/store/migrations.h"
#include "coordinator/store/store_internal.h"
#include "coordinator/store/store_statements.h"
#include "engine/common/status_macros.h"

namespace fleetmark::store {

using internal::InTransaction;

PgStore::PgStore(StoreOptions options, std::unique_ptr<ConnectionPool> pool)
    : options_(std::move(options)), pool_(std::move(pool)) {}

PgStore::~PgStore() = default;

absl::StatusOr<std::unique_ptr<PgStore>> PgStore::Open(const StoreOptions& options) {
  auto pool = ConnectionPool::Create(options.connection);
  if (!pool.ok()) return pool.status();
  for (const auto& [name, sql] : internal::PreparedStatements()) {
    (*pool)->AddPreparedStatement(name, sql);
  }
  return std::unique_ptr<PgStore>(new PgStore(options, std::move(*pool)));
}

absl::StatusOr<std::unique_ptr<Store>> Store::Open(const StoreOptions& options) {
  absl::StatusOr<std::unique_ptr<PgStore>> store = PgStore::Open(options);
  if (!store.ok()) return store.status();
  return std::unique_ptr<Store>(*std::move(store));
}

absl::StatusOr<std::vector<AgentSummary>> AgentStore::ListAgentSummariesNamed(const std::string& name) {
  FLEETMARK_ASSIGN_OR_RETURN(std::vector<AgentSummary> agents, ListAgentSummaries());
  std::vector<AgentSummary> named;
  for (AgentSummary& agent : agents) {
    if (agent.name == name) named.push_back(std::move(agent));
  }
  return named;
}

absl::Status PgStore::Migrate() {
  auto lease = pool_->Acquire();
  if (!lease.ok()) return lease.status();
  absl::Status status = ApplyMigrations(**lease, EmbeddedMigrations());
  // On error the session may still hold the advisory lock: close it.
  if (!status.ok()) lease->Discard();
  return status;
}

absl::StatusOr<std::vector<int>> PgStore::AppliedMigrations() {
  return InTransaction(*pool_, "schema_migrations", [](pqxx::work& txn) {
    std::vector<int> versions;
    pqxx::result exists = txn.exec("SELECT to_regclass('schema_migrations') IS NOT NULL");
    if (!exists[0][0].as<bool>()) return versions;
    for (const auto& row : txn.exec("SELECT version FROM schema_migrations ORDER BY version")) {
      versions.push_back(row[0].as<int>());
    }
    return versions;
  });
}

}  // namespace fleetmark::store

namespace fleetmark::store {

std::vector<int> EmbeddedMigrationVersions() {
  std::vector<int> versions;
  for (const Migration& migration : EmbeddedMigrations()) versions.push_back(migration.version);
  return versions;
}

absl::StatusOr<FleetCounts> PgStore::CountFleet() {
  return InTransaction(*pool_, "count fleet", [&](pqxx::work& txn) {
    FleetCounts counts;
    for (const char* state : kFleetAgentStates) counts.agents_by_state[state] = 0;
    for (const char* status : {kJobQueued, kJobAssigned, kJobRunning, kJobDone, kJobFailed, kJobCancelled}) {
      counts.jobs_by_state[status] = 0;
    }
    // "online" as ListAgentSummaries counts it: state online and seen within the window.
    pqxx::result agents = txn.exec_params(
        "SELECT CASE WHEN removed_at IS NOT NULL THEN 'removed'"
        "            WHEN imported THEN 'imported'"
        "            WHEN state = 'online' AND last_seen > now() - $1::interval THEN 'online'"
        "            ELSE 'offline' END AS s, count(*) FROM agents GROUP BY s",
        internal::IntervalParam(options_.online_window));
    for (const auto& row : agents) counts.agents_by_state[row[0].as<std::string>()] = row[1].as<int64_t>();
    for (const auto& row : txn.exec("SELECT status, count(*) FROM jobs GROUP BY status")) {
      counts.jobs_by_state[row[0].as<std::string>()] = row[1].as<int64_t>();
    }
    counts.runs_in_flight =
        txn.exec("SELECT count(*) FROM runs WHERE status NOT IN ('done', 'failed', 'cancelled')")[0][0].as<int64_t>();
    return counts;
  });
}

}  // namespace fleetmark::store
