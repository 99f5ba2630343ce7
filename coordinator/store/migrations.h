// Versioned SQL migrations of the coordinator's schema (coordinator/store/migrations/).
//
// Files are named NNNN_what.sql; the number is the version. 0001-0049 belong to the
// coordinator's core schema, 0050+ to the web view's indexes. They are embedded in the
// binary at build time and applied in version order by ApplyMigrations.
#pragma once

#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "absl/status/status.h"

namespace fleetmark::store {

struct Migration {
  int version;
  const char* name;
  const char* sql;
};

// The embedded migrations, ascending by version (generated file).
const std::vector<Migration>& EmbeddedMigrations();

// Applies every migration in `migrations` not yet recorded in schema_migrations, each in
// its own transaction, holding a session-level advisory lock so that coordinators
// starting together apply each exactly once. Errors: InvalidArgument for duplicate or
// unordered versions, the mapped database error (naming the migration) otherwise.
absl::Status ApplyMigrations(pqxx::connection& conn, const std::vector<Migration>& migrations);

// Versions recorded in schema_migrations (ascending); empty if the table is missing.
std::vector<int> AppliedMigrationVersions(pqxx::connection& conn);

}  // namespace fleetmark::store
