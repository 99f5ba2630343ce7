// The results retention slice of Store (store.h): case_results partitions by month
// (migration 0014), created ahead and pruned. Services that use only retention take a
// RetentionStore&.
// Thread-safety: every method may be called from any thread; each call borrows one
// pooled connection for its duration. Errors: Unavailable when the database is down
// (callers retry), NotFound for unknown ids/names, InvalidArgument for malformed ids,
// AlreadyExists for duplicate names, FailedPrecondition for forbidden state changes.
// Ids are UUID strings. Times are absl::Time (UTC).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace fleetmark::store {

// A monthly partition of case_results (migration 0014): results of the runs created in
// [from, to) (UTC calendar month).
struct ResultPartition {
  std::string name;  // e.g. "case_results_y2026m03"
  absl::Time from;
  absl::Time to;
  int64_t estimated_rows = 0;  // pg_class.reltuples (as of the last ANALYZE; -1 = never analyzed)
};

// What PruneResults drops.
struct PruneOptions {
  // Partitions whose range ends at or before now - older_than go (1h <= older_than <=
  // 36500 days: CheckRetention in coordinator/service/retention.h).
  absl::Duration older_than = absl::ZeroDuration();
  bool force = false;    // also runs never exported
  bool dry_run = false;  // answer what would go, change nothing
};

struct PruneOutcome {
  absl::Time cutoff;                        // now - older_than (database clock)
  std::vector<ResultPartition> partitions;  // dropped (dry run: would be), oldest first
  std::vector<std::string> run_ids;         // the runs created in them, deleted with their jobs
};

// Results retention; PgStore and MemoryStore implement it as Store.
class RetentionStore {
 public:
  virtual ~RetentionStore() = default;

  // Creates the monthly partitions from this month through `months_ahead` months ahead
  // (0..120) that do not exist yet (rows of such a month in the DEFAULT partition move
  // in); answers how many it created. Idempotent; safe with concurrent coordinators (a
  // transaction-level advisory lock).
  virtual absl::StatusOr<int> EnsureResultPartitions(int months_ahead) = 0;
  // Drops the partitions whose range ends at or before now - options.older_than, and
  // deletes the runs created in their ranges with their jobs (and any of their rows in
  // the DEFAULT partition), in one transaction. FailedPrecondition naming the runs, and
  // nothing changed, when one is still queued or running, or (unless options.force) has
  // results and was never exported (RecordRunExported). InvalidArgument for older_than
  // out of range. dry_run: the same answer and checks, nothing changed.
  virtual absl::StatusOr<PruneOutcome> PruneResults(const PruneOptions& options) = 0;
};

}  // namespace fleetmark::store
