// PgStore: opening and migrations. Enrollment tokens, agents, jobs/results and schedules
// live in store_tokens.cc, store_agents.cc, store_jobs.cc and store_schedules.cc.
#include "coordinator/store/pg_store.h"

#include "coordinator/store/migrations.h"
#include "coordinator/store/store_internal.h"
#include "coordinator/store/store_statements.h"

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
