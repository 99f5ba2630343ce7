// How the store reaches PostgreSQL (no libpqxx types: the Store interface's options
// carry it, and only coordinator/store/ includes <pqxx/...>).
#pragma once

#include <string>

#include "absl/time/time.h"

namespace fleetmark::store {

struct ConnectionOptions {
  // libpq URI or key=value string, e.g. "postgresql://postgres@127.0.0.1:5433/fleetmark".
  std::string uri;
  // Connections opened at most (1..256). One per thread that talks to the database.
  int pool_size = 4;
  // How long Acquire() waits for a free connection.
  absl::Duration acquire_timeout = absl::Seconds(30);
  // PostgreSQL application_name, shown in pg_stat_activity.
  std::string application_name = "fleetmark-coordinator";
  // Whether ConnectionPool::Create opens a first connection to check the URI (and fails
  // with Unavailable when it cannot). false: the first Acquire connects, for a read
  // replica that may be down while the coordinator starts.
  bool connect_at_create = true;
};

}  // namespace fleetmark::store
