// The confirmed changes slice of Store (store.h; change_records.h, migration 0012): scans
// of nightly runs, confirmation runs and the decided changes. Services that use only
// changes take a ChangeStore&.
// Thread-safety: every method may be called from any thread; each call borrows one
// pooled connection for its duration. Errors: Unavailable when the database is down
// (callers retry), NotFound for unknown ids/names, InvalidArgument for malformed ids,
// AlreadyExists for duplicate names, FailedPrecondition for forbidden state changes.
// Ids are UUID strings. Times are absl::Time (UTC).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "coordinator/store/change_records.h"
#include "coordinator/store/new_run.h"
#include "fleetmark/v1/control.pb.h"
#include "fleetmark/v1/plan.pb.h"

namespace fleetmark::store {

// Confirmed changes; PgStore and MemoryStore implement it as Store.
class ChangeStore {
 public:
  virtual ~ChangeStore() = default;

  // PgStore and MemoryStore implement them; an implementation that does not inherits
  // these defaults, which return an absl::UnimplementedError status.
  //
  // Scans up to `max_scans` (nightly run, agent) pairs not scanned yet: jobs of ended
  // runs submitted by a schedule (never confirmation runs). Each scan claims its pair
  // (change_scans) and, in the same transaction, records what `detect` finds in the
  // agent's series of the run's non-calibration cases (each series ends at that run) as
  // `suspected` changes. Returns the scans that found changes.
  virtual absl::StatusOr<std::vector<SuspectedChanges>> ScanNightlyRuns(const ChangeDetector& /*detect*/,
                                                                        int /*max_scans*/) {
    return absl::UnimplementedError("confirmed changes need the PostgreSQL store");
  }
  // For the suspected changes `found`, under the agent row's lock: when the agent is
  // removed, quarantined or offline, or already had `budget_per_day` confirmation runs
  // in the last 24 hours, marks them unconfirmed with the reason and returns it;
  // otherwise creates the run `build(plan, quick)` returns (the nightly run's stored plan
  // and quick flag), records it as their confirmation run and returns "" with the run
  // in `run`. An error of `build` marks them unconfirmed with its message.
  using ConfirmationBuilder = std::function<absl::StatusOr<NewRun>(const v1::Plan& plan, bool quick)>;
  virtual absl::StatusOr<std::string> SubmitConfirmation(const SuspectedChanges& /*found*/, int /*budget_per_day*/,
                                                         const ConfirmationBuilder& /*build*/, v1::RunInfo* /*run*/) {
    return absl::UnimplementedError("confirmed changes need the PostgreSQL store");
  }
  // Suspected changes whose confirmation run ended (done, failed or cancelled), oldest
  // first, at most `limit`.
  virtual absl::StatusOr<std::vector<EndedConfirmation>> EndedConfirmations(int /*limit*/) {
    return absl::UnimplementedError("confirmed changes need the PostgreSQL store");
  }
  // Decides change `change_id` if it is still suspected: its state, reason and the
  // confirmation median. Returns the updated change, or nullopt if it was decided
  // already (by another coordinator).
  virtual absl::StatusOr<std::optional<ChangeRecord>> DecideChange(int64_t /*change_id*/, const std::string& /*state*/,
                                                                   const std::string& /*reason*/,
                                                                   std::optional<double> /*median_ns*/) {
    return absl::UnimplementedError("confirmed changes need the PostgreSQL store");
  }
  // The changes `filter` selects, newest first. InvalidArgument naming `limit` out of
  // 1..10000.
  virtual absl::StatusOr<std::vector<ChangeRecord>> ListChanges(const ChangeFilter& /*filter*/) {
    return absl::UnimplementedError("confirmed changes need the PostgreSQL store");
  }
};

}  // namespace fleetmark::store
