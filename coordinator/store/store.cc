// Store: opening, migrations and enrollment tokens. Agents, jobs/results and schedules
// live in store_agents.cc, store_jobs.cc and store_schedules.cc.
#include "coordinator/store/store.h"

#include "coordinator/store/migrations.h"
#include "coordinator/store/store_internal.h"
#include "coordinator/store/store_statements.h"

namespace fleetmark::store {

using internal::InTransaction;
using internal::InTransactionOr;

Store::Store(StoreOptions options, std::unique_ptr<ConnectionPool> pool)
    : options_(std::move(options)), pool_(std::move(pool)) {}

Store::~Store() = default;

absl::StatusOr<std::unique_ptr<Store>> Store::Open(const StoreOptions& options) {
  auto pool = ConnectionPool::Create(options.connection);
  if (!pool.ok()) return pool.status();
  for (const auto& [name, sql] : internal::PreparedStatements()) {
    (*pool)->AddPreparedStatement(name, sql);
  }
  return std::unique_ptr<Store>(new Store(options, std::move(*pool)));
}

absl::Status Store::Migrate() {
  auto lease = pool_->Acquire();
  if (!lease.ok()) return lease.status();
  absl::Status status = ApplyMigrations(**lease, EmbeddedMigrations());
  // On error the session may still hold the advisory lock: close it.
  if (!status.ok()) lease->Discard();
  return status;
}

absl::StatusOr<std::vector<int>> Store::AppliedMigrations() {
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

absl::Status Store::CreateEnrollmentToken(const std::string& token_id, const std::string& sha256_hex,
                                          const std::string& description) {
  auto done = InTransaction(*pool_, absl::StrCat("create token ", token_id), [&](pqxx::work& txn) {
    txn.exec_params(
        "INSERT INTO enrollment_tokens (token_id, token_sha256, description) VALUES ($1, $2, $3)",
        token_id, sha256_hex, description);
    return true;
  });
  return done.status();
}

absl::Status Store::EnsureEnrollmentToken(const std::string& token_id, const std::string& sha256_hex,
                                          const std::string& description) {
  auto done = InTransaction(*pool_, "seed enrollment token", [&](pqxx::work& txn) {
    txn.exec_params(
        "INSERT INTO enrollment_tokens (token_id, token_sha256, description) VALUES ($1, $2, $3) "
        "ON CONFLICT DO NOTHING",
        token_id, sha256_hex, description);
    return true;
  });
  return done.status();
}

absl::Status Store::RevokeEnrollmentToken(const std::string& token_id) {
  return InTransactionOr(*pool_, absl::StrCat("revoke token ", token_id),
                         [&](pqxx::work& txn) -> absl::Status {
                           pqxx::result r = txn.exec_params(
                               "UPDATE enrollment_tokens SET revoked_at = coalesce(revoked_at, now()) "
                               "WHERE token_id = $1",
                               token_id);
                           if (r.affected_rows() == 0) {
                             return absl::NotFoundError(
                                 absl::StrCat("enrollment token \"", token_id, "\" not found"));
                           }
                           return absl::OkStatus();
                         });
}

absl::StatusOr<std::string> Store::FindEnrollmentToken(const std::string& sha256_hex) {
  return InTransactionOr(*pool_, "find enrollment token",
                         [&](pqxx::work& txn) -> absl::StatusOr<std::string> {
                           pqxx::result r = txn.exec_prepared("fm_find_token", sha256_hex);
                           if (r.empty()) return absl::NotFoundError("enrollment token unknown");
                           if (!r[0][1].is_null()) {
                             return absl::PermissionDeniedError(absl::StrCat(
                                 "enrollment token ", r[0][0].as<std::string>(), " revoked"));
                           }
                           return r[0][0].as<std::string>();
                         });
}

}  // namespace fleetmark::store
