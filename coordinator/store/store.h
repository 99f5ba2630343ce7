// The coordinator's PostgreSQL store: agents, enrollment tokens (hashed), plans, runs,
// jobs (status, lease, attempts), case results, host snapshots, schedules and their
// fires. Several coordinators may share one database: job claims use
// `FOR UPDATE SKIP LOCKED`, a schedule slot fires once via a unique (schedule, slot)
// key, migrations run under an advisory lock, and the transactions that queue or end
// jobs or make agents unwelcome NOTIFY the other coordinators (notification.h).
//
//   StoreOptions options;
//   options.connection.uri = "postgresql://postgres@127.0.0.1:5433/fleetmark";
//   FLEETMARK_ASSIGN_OR_RETURN(std::unique_ptr<Store> store, Store::Open(options));
//   FLEETMARK_RETURN_IF_ERROR(store->Migrate());
//
// Store is the whole interface; it has no libpqxx types (only
// coordinator/store/ includes <pqxx/...>). Store::Open returns the PostgreSQL
// implementation (coordinator/store/pg_store.h); coordinator/store/memory_store.h is the
// in-memory one (tests without PostgreSQL). Both pass one conformance suite
// (tests/coordinator/store_conformance_test.cc).
// Store is the union of one interface per aggregate: TokenStore (token_store.h),
// AgentStore (agent_store.h), RunStore (runs, jobs and results: run_store.h),
// RetentionStore (retention_store.h), ScheduleStore (schedule_store.h) and ChangeStore
// (change_store.h); it adds migrations and the fleet counts. A service takes only the
// slices it uses.
// Thread-safety: every method may be called from any thread; each call borrows one
// pooled connection for its duration. Errors: Unavailable when the database is down
// (callers retry), NotFound for unknown ids/names, InvalidArgument for malformed ids,
// AlreadyExists for duplicate names, FailedPrecondition for forbidden state changes.
// Ids are UUID strings. Times are absl::Time (UTC).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "coordinator/store/agent_health.h"
#include "coordinator/store/agent_store.h"
#include "coordinator/store/change_records.h"
#include "coordinator/store/change_store.h"
#include "coordinator/store/connection_options.h"
#include "coordinator/store/new_run.h"
#include "coordinator/store/retention_store.h"
#include "coordinator/store/run_store.h"
#include "coordinator/store/schedule_store.h"
#include "coordinator/store/token_store.h"
#include "fleetmark/v1/agent.pb.h"
#include "fleetmark/v1/control.pb.h"
#include "fleetmark/v1/host.pb.h"
#include "fleetmark/v1/plan.pb.h"
#include "fleetmark/v1/result.pb.h"

namespace fleetmark::store {

struct StoreOptions {
  ConnectionOptions connection;
  // Recorded on jobs this coordinator claims and on schedule fires (diagnostics).
  std::string coordinator_id = "coordinator";
  // An agent counts as online while state = 'online' and it was seen this recently.
  absl::Duration online_window = absl::Seconds(30);
  // Noise score window and quarantine rules, applied when a job finishes (FinishJob).
  HealthOptions health;
  // A job re-queued for its agent (ExpireLeases, ReleaseAgentJobs) that no agent takes
  // back within this long fails as infrastructure at the next ExpireLeases (a later
  // NewRun::queue_expiry stands). The coordinator passes --requeue_timeout.
  absl::Duration requeue_timeout = absl::Seconds(30);
};

// agents.health values.
inline constexpr char kHealthOk[] = "ok";
inline constexpr char kHealthQuarantined[] = "quarantined";

// Job statuses (jobs.status). Terminal: done, failed, cancelled.
inline constexpr char kJobQueued[] = "queued";
inline constexpr char kJobAssigned[] = "assigned";
inline constexpr char kJobRunning[] = "running";
inline constexpr char kJobDone[] = "done";
inline constexpr char kJobFailed[] = "failed";
inline constexpr char kJobCancelled[] = "cancelled";
// Prefix of the message of a job failed because its agent was lost (vs a benchmark failure).
inline constexpr char kInfrastructurePrefix[] = "infrastructure: ";

// How RegisterAgent's refusal of a second live session of one identity begins.
inline constexpr char kIdentityInUsePrefix[] = "identity in use: ";

// Why the stream of an agent removed by `fleetmark agents remove` is ended.
inline constexpr char kAgentRemovedReason[] =
    "agent removed by an operator (fleetmark agents remove); its credential is no longer valid";

// The states FleetCounts::agents_by_state counts.
inline constexpr const char* kFleetAgentStates[] = {"online", "offline", "imported", "removed"};

// What `GET /metrics` reports of the whole fleet (every coordinator's database view).
struct FleetCounts {
  // Agents by state (kFleetAgentStates, every one present, 0 when none): "online" (seen
  // within StoreOptions::online_window), "offline" (an agent not seen within it),
  // "imported" (a device record of `fleetmark results import`: no agent, never online),
  // "removed" (`fleetmark agents remove`, imported records included).
  std::map<std::string, int64_t> agents_by_state;
  // Jobs by jobs.status (kJobQueued ... kJobCancelled), every status present.
  std::map<std::string, int64_t> jobs_by_state;
  // Runs not yet done, failed or cancelled.
  int64_t runs_in_flight = 0;
};

// Errors the store met in this process (process-wide, all stores): connections that
// could not be opened or broke, and server errors other than constraint violations and
// malformed input (those are answers, not failures). Any thread; never reset.
uint64_t DatabaseErrorCount();

// The schema versions this build embeds (coordinator/store/migrations/), ascending.
std::vector<int> EmbeddedMigrationVersions();

// Every aggregate of the store, plus migrations and the fleet counts.
class Store : public TokenStore,
              public AgentStore,
              public RunStore,
              public RetentionStore,
              public ScheduleStore,
              public ChangeStore {
 public:
  // Opens the connection pool (checks the database is reachable). Does not migrate.
  static absl::StatusOr<std::unique_ptr<Store>> Open(const StoreOptions& options);
  virtual ~Store() = default;

  // Applies the embedded migrations (coordinator/store/migrations/NNNN_*.sql) not yet
  // recorded in schema_migrations, in order, each in its own transaction, under a
  // PostgreSQL advisory lock so concurrent coordinators do not race. Idempotent.
  virtual absl::Status Migrate() = 0;
  // Versions recorded in schema_migrations, ascending.
  virtual absl::StatusOr<std::vector<int>> AppliedMigrations() = 0;
  // Agents, jobs and runs by state, in one read-only transaction (`GET /metrics`).
  virtual absl::StatusOr<FleetCounts> CountFleet() = 0;
};

}  // namespace fleetmark::store
