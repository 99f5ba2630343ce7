// Store: enrollment tokens (only SHA-256 hashes of the secrets are stored).
#include <string>
#include <utility>
#include <vector>

#include <pqxx/pqxx>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "engine/common/status_macros.h"
#include "coordinator/store/pg_store.h"
#include "coordinator/store/store_internal.h"

namespace fleetmark::store {

using internal::InTransaction;
using internal::InTransactionOr;

absl::Status PgStore::CreateEnrollmentToken(const std::string& token_id, const std::string& sha256_hex,
                                            const std::string& description) {
  auto done = InTransaction(*pool_, absl::StrCat("create token ", token_id), [&](pqxx::work& txn) {
    txn.exec_params("INSERT INTO enrollment_tokens (token_id, token_sha256, description) VALUES ($1, $2, $3)", token_id,
                    sha256_hex, description);
    return true;
  });
  return done.status();
}

absl::Status PgStore::EnsureEnrollmentToken(const std::string& token_id, const std::string& sha256_hex,
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

absl::Status PgStore::RevokeEnrollmentToken(const std::string& token_id) {
  return InTransactionOr(*pool_, absl::StrCat("revoke token ", token_id), [&](pqxx::work& txn) -> absl::Status {
    // The row lock makes a second revoke running at the same moment see the first one.
    pqxx::result r = txn.exec_params(
        "SELECT " + internal::UnixNs("revoked_at") + " FROM enrollment_tokens WHERE token_id = $1 FOR UPDATE",
        token_id);
    if (r.empty()) {
      return absl::NotFoundError(absl::StrCat("enrollment token \"", token_id, "\" not found"));
    }
    if (!r[0][0].is_null()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "enrollment token \"", token_id, "\" was already revoked at ",
          absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", absl::FromUnixNanos(r[0][0].as<int64_t>()), absl::UTCTimeZone()),
          "; nothing changed"));
    }
    txn.exec_params("UPDATE enrollment_tokens SET revoked_at = now() WHERE token_id = $1", token_id);
    // The coordinators holding agents enrolled with it end their streams on commit.
    Notification disconnect{.kind = NotificationKind::kDisconnect};
    for (const auto& row :
         txn.exec_params("SELECT agent_id::text FROM agents WHERE token_id = $1 AND removed_at IS NULL", token_id)) {
      disconnect.agent_ids.push_back(row[0].as<std::string>());
    }
    internal::Notify(txn, disconnect);
    return absl::OkStatus();
  });
}

absl::StatusOr<std::string> PgStore::FindEnrollmentToken(const std::string& sha256_hex) {
  return InTransactionOr(*pool_, "find enrollment token", [&](pqxx::work& txn) -> absl::StatusOr<std::string> {
    pqxx::result r = txn.exec_prepared("fm_find_token", sha256_hex);
    if (r.empty()) return absl::NotFoundError("enrollment token unknown");
    if (!r[0][1].is_null()) {
      return absl::PermissionDeniedError(absl::StrCat("enrollment token ", r[0][0].as<std::string>(), " revoked"));
    }
    return r[0][0].as<std::string>();
  });
}

absl::StatusOr<std::vector<v1::TokenInfo>> PgStore::ListEnrollmentTokens() {
  return InTransaction(*pool_, "list enrollment tokens", [&](pqxx::work& txn) {
    std::vector<v1::TokenInfo> tokens;
    pqxx::result r = txn.exec("SELECT t.token_id, t.description, " + internal::UnixNs("t.created_at") + ", coalesce(" +
                              internal::UnixNs("t.revoked_at") +
                              ", 0), (SELECT count(*) FROM agents a WHERE a.token_id = t.token_id) "
                              "FROM enrollment_tokens t ORDER BY t.created_at, t.token_id");
    for (const auto& row : r) {
      v1::TokenInfo& token = tokens.emplace_back();
      token.set_token_id(row[0].as<std::string>());
      token.set_description(row[1].as<std::string>());
      token.set_created_unix_ns(row[2].as<int64_t>());
      token.set_revoked_unix_ns(row[3].as<int64_t>());
      token.set_agents(row[4].as<uint32_t>());
    }
    return tokens;
  });
}

absl::StatusOr<std::vector<PgStore::Disconnect>> PgStore::AgentsToDisconnect(
    const std::vector<std::string>& agent_ids, const std::vector<std::string>& session_ids) {
  std::vector<Disconnect> found;
  if (agent_ids.empty()) return found;
  FLEETMARK_RETURN_IF_ERROR(internal::CheckDisconnectArguments(agent_ids, session_ids));
  return InTransaction(*pool_, "agents to disconnect", [&](pqxx::work& txn) {
    // No session given ($2 empty: NULL): only removal and revocation count.
    pqxx::result r = txn.exec_params(
        "SELECT a.agent_id::text, a.removed_at IS NOT NULL, coalesce(a.token_id, ''),"
        " coalesce(t.revoked_at IS NOT NULL, false), a.name, a.coordinator_id "
        "FROM unnest($1::uuid[]) WITH ORDINALITY AS v(id, i) JOIN agents a ON a.agent_id = v.id "
        "LEFT JOIN enrollment_tokens t ON t.token_id = a.token_id "
        "WHERE a.removed_at IS NOT NULL OR t.revoked_at IS NOT NULL OR a.session_id <> ($2::text[])[v.i] "
        "ORDER BY a.agent_id",
        internal::UuidArray(agent_ids), internal::TextArray(session_ids));
    for (const auto& row : r) {
      Disconnect& d = found.emplace_back();
      d.agent_id = row[0].as<std::string>();
      if (row[1].as<bool>()) {
        d.reason = kAgentRemovedReason;
      } else if (row[3].as<bool>()) {
        d.reason = absl::StrCat("enrollment token ", row[2].as<std::string>(), " revoked");
      } else {
        d.identity_in_use = true;
        d.reason = absl::StrCat(kIdentityInUsePrefix, "another process with the credential of agent \"",
                                row[4].as<std::string>(), "\" took its session over (now on coordinator ",
                                row[5].as<std::string>(),
                                ") after this one fell silent; this process stops its job and retries");
      }
    }
    return found;
  });
}

}  // namespace fleetmark::store
