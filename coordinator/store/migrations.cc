#include "coordinator/store/migrations.h"

#include <pqxx/pqxx>

#include "absl/strings/str_cat.h"
#include "coordinator/store/connection_pool.h"

namespace fleetmark::store {
namespace {

// Arbitrary constant key of the advisory lock serializing migrations ("fleetmrk").
constexpr int64_t kMigrationLockKey = 0x666c6565746d726bLL;

}  // namespace

std::vector<int> AppliedMigrationVersions(pqxx::connection& conn) {
  std::vector<int> versions;
  pqxx::work txn(conn);
  pqxx::result exists = txn.exec("SELECT to_regclass('schema_migrations') IS NOT NULL");
  if (!exists[0][0].as<bool>()) return versions;
  for (const auto& row : txn.exec("SELECT version FROM schema_migrations ORDER BY version")) {
    versions.push_back(row[0].as<int>());
  }
  txn.commit();
  return versions;
}

absl::Status ApplyMigrations(pqxx::connection& conn, const std::vector<Migration>& migrations) {
  for (size_t i = 1; i < migrations.size(); ++i) {
    if (migrations[i].version <= migrations[i - 1].version) {
      return absl::InvalidArgumentError(
          absl::StrCat("migration ", migrations[i].name, ": version must be greater than ", migrations[i - 1].version));
    }
  }
  const char* current = "schema_migrations";
  try {
    {
      pqxx::nontransaction lock(conn);
      lock.exec(absl::StrCat("SELECT pg_advisory_lock(", kMigrationLockKey, ")"));
      lock.exec(
          "CREATE TABLE IF NOT EXISTS schema_migrations ("
          " version integer PRIMARY KEY, name text NOT NULL,"
          " applied_at timestamptz NOT NULL DEFAULT now())");
    }
    std::vector<int> applied = AppliedMigrationVersions(conn);
    for (const Migration& migration : migrations) {
      if (std::find(applied.begin(), applied.end(), migration.version) != applied.end()) continue;
      current = migration.name;
      pqxx::work txn(conn);
      txn.exec(migration.sql);
      txn.exec_params("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", migration.version,
                      std::string(migration.name));
      txn.commit();
    }
    pqxx::nontransaction unlock(conn);
    unlock.exec(absl::StrCat("SELECT pg_advisory_unlock(", kMigrationLockKey, ")"));
  } catch (const std::exception& e) {
    // The session lock dies with the connection; the caller discards it on error.
    return StatusFromPqxx(e, absl::StrCat("migration ", current));
  }
  return absl::OkStatus();
}

}  // namespace fleetmark::store
