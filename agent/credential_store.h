// Persists the agent's identity between runs: the agent id and credential issued in the
// coordinator's Welcome, kept in `<state_dir>/credential` (mode 0600) so the enrollment
// token is only needed on first contact.
#pragma once

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace fleetmark::agent {

struct StoredCredential {
  std::string agent_id;
  std::string credential;
};

// Reads the stored credential; std::nullopt if none was stored. Internal (naming the
// path) for unreadable or malformed files. Thread-safe w.r.t. Save (atomic rename).
absl::StatusOr<std::optional<StoredCredential>> LoadCredential(const std::string& state_dir);

// Writes atomically (temporary file, fsync, rename, fsync directory). Internal on I/O
// errors; InvalidArgument if a field is empty or contains a newline.
absl::Status SaveCredential(const std::string& state_dir, const StoredCredential& stored);

// Removes the stored credential (e.g. after the coordinator refused it). OK if absent.
absl::Status ForgetCredential(const std::string& state_dir);

}  // namespace fleetmark::agent
