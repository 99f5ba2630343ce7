// The enrollment tokens slice of Store (store.h): tokens (only hashes are stored) and
// which connected agents must be disconnected (removed, enrolled with a revoked token,
// or displaced by another session). Services that use only tokens take a TokenStore&.
// Thread-safety: every method may be called from any thread; each call borrows one
// pooled connection for its duration. Errors: Unavailable when the database is down
// (callers retry), NotFound for unknown ids/names, InvalidArgument for malformed ids,
// AlreadyExists for duplicate names, FailedPrecondition for forbidden state changes.
// Ids are UUID strings. Times are absl::Time (UTC).
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fleetmark/v1/control.pb.h"

namespace fleetmark::store {

// Enrollment tokens (only hashes are stored); PgStore and MemoryStore implement it as Store.
class TokenStore {
 public:
  virtual ~TokenStore() = default;

  // AlreadyExists if `token_id` exists.
  virtual absl::Status CreateEnrollmentToken(const std::string& token_id, const std::string& sha256_hex,
                                             const std::string& description) = 0;
  // Inserts the token unless a token with this hash exists (seeding from a file).
  virtual absl::Status EnsureEnrollmentToken(const std::string& token_id, const std::string& sha256_hex,
                                             const std::string& description) = 0;
  // NotFound naming the id if unknown; FailedPrecondition saying when if it was
  // already revoked (nothing changes). Notifies (notification.h: disconnect) the agents
  // enrolled with it on commit.
  virtual absl::Status RevokeEnrollmentToken(const std::string& token_id) = 0;
  // The token id for a hash; NotFound if unknown, PermissionDenied if revoked.
  virtual absl::StatusOr<std::string> FindEnrollmentToken(const std::string& sha256_hex) = 0;
  // Every token, oldest first, with the number of agents enrolled with it. Neither the
  // secret nor its hash is returned.
  virtual absl::StatusOr<std::vector<v1::TokenInfo>> ListEnrollmentTokens() = 0;
  // Of `agent_ids` (connected agents), those that must be disconnected: removed
  // (`agents remove`, reason kAgentRemovedReason) or enrolled with a revoked token
  // (reason "enrollment token <id> revoked"), ordered by agent id. One statement.
  // InvalidArgument naming `agent_ids[]` if an id is not a UUID.
  // With `session_ids` (parallel to `agent_ids`: the stream this coordinator serves each
  // agent on), also the agents whose identity another session holds now (a takeover:
  // RegisterAgent), with identity_in_use and a reason naming where it is held.
  // InvalidArgument naming `session_ids` when the sizes differ.
  struct Disconnect {
    std::string agent_id;
    std::string reason;
    bool identity_in_use = false;  // displaced by another session (else removed or revoked)
  };
  virtual absl::StatusOr<std::vector<Disconnect>> AgentsToDisconnect(
      const std::vector<std::string>& agent_ids, const std::vector<std::string>& session_ids = {}) = 0;
};

}  // namespace fleetmark::store
