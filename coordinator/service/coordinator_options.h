// The options of a coordinator (Coordinator::Start, coordinator.h): what main.cc's flags
// set and tests fill in, and CheckCoordinatorOptions, the one check of their values and
// combinations before anything is opened.
//
//   CoordinatorOptions options;
//   options.database_uri = uri;
//   FLEETMARK_RETURN_IF_ERROR(CheckCoordinatorOptions(options));
//
// Thread-safety: a plain struct; CheckCoordinatorOptions is pure.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "coordinator/service/change_monitor.h"
#include "coordinator/store/agent_health.h"
#include "engine/common/clock.h"
#include "fleetmark/v1/plan.pb.h"

namespace fleetmark::store {
class MemoryDatabase;  // coordinator/store/memory_store.h
}  // namespace fleetmark::store

namespace fleetmark::service {

// Where a coordinator keeps its rows.
enum class StoreBackend {
  // PostgreSQL at CoordinatorOptions::database_uri: the product.
  kPostgres,
  // An in-process MemoryStore (coordinator/store/memory_store.h) with PostgreSQL's
  // semantics (one conformance suite runs on both): for tests and demos on one machine.
  // Nothing survives the process; no read replica; notifications reach only the
  // coordinators of the same process that share its MemoryDatabase.
  kMemory,
};

struct CoordinatorOptions {
  // The store (default PostgreSQL). kMemory needs database_uri and read_database_uri
  // empty and a loopback listen_address (see CheckCoordinatorOptions).
  StoreBackend store = StoreBackend::kPostgres;
  // kMemory: the database to use (shared by several coordinators of one process, kept
  // by a test across a restart or read by it); null = a new one whose time is `clock`.
  // A given database's clock should be the coordinator's `clock`. Ignored (and must be
  // null) with kPostgres.
  std::shared_ptr<store::MemoryDatabase> memory_database;
  // gRPC listen address "host:port"; port 0 picks a free port (see port()).
  std::string listen_address = "127.0.0.1:7443";
  // PostgreSQL URI (required with StoreBackend::kPostgres, refused with kMemory).
  std::string database_uri;
  // TLS: PEM files. Cert+key enable TLS; a client CA additionally requires and
  // verifies client certificates (mutual TLS). All empty = plaintext (loopback only
  // unless allow_insecure_remote).
  std::string tls_cert_file, tls_key_file, tls_client_ca_file;
  bool allow_insecure_remote = false;
  // Serve gRPC server reflection (what grpcurl uses to list and call the API without
  // the .proto files). Only descriptors are exposed: every ControlService call still
  // needs the admin token.
  bool grpc_reflection = true;
  // Admin token for ControlService ("authorization: Bearer <token>"); "" refuses every
  // control call.
  std::string admin_token;
  // Enrollment tokens seeded at start (stored hashed; idempotent).
  std::vector<std::string> enrollment_tokens;
  // Name of this coordinator in the database (claims, schedule fires).
  std::string coordinator_id = "coordinator";
  // Agents send heartbeats this often (told in Welcome); liveness is flushed to the
  // database at the same period.
  absl::Duration heartbeat_interval = absl::Seconds(5);
  // A job's lease: renewed by heartbeats and progress; expired → re-queued or failed.
  absl::Duration job_lease = absl::Seconds(30);
  // How often expired leases, schedules and ended jobs are checked, and queued jobs of
  // connected idle agents claimed (jobs are also pushed at once on submit/finish/connect
  // and on other coordinators' notifications). Liveness is flushed every
  // heartbeat_interval whatever this is.
  absl::Duration sweep_interval = absl::Seconds(1);
  // Listen for other coordinators' notifications (PostgreSQL LISTEN/NOTIFY on a
  // dedicated connection): a job queued, a run cancelled or an agent revoked through
  // another coordinator reaches this one's agents at once instead of at its next sweep
  // (or liveness flush). Off: the sweep alone, e.g. behind a transaction-mode connection
  // pooler (PgBouncer), where LISTEN does not work. Notifications are sent either way.
  bool listen_notifications = true;
  // When the database has been unreachable this long, agent streams are ended with
  // UNAVAILABLE: agents keep their results spooled and replay them once they are
  // welcomed again (hellos are refused, retryable, while the database is down). Keeps
  // the coordinator's memory bounded during long outages; shorter blips are absorbed.
  absl::Duration db_outage_grace = absl::Seconds(5);
  // Attempts per job before it fails as infrastructure (1..100).
  int max_attempts = 3;
  // A job re-queued after its agent's lease expired (or its agent restarted) waits this
  // long for an agent to take it back; then it fails as infrastructure and its run can
  // end, whatever attempts are left. Zero = one job_lease. 0 <= requeue_timeout <= 7 days.
  absl::Duration requeue_timeout = absl::ZeroDuration();
  // Threads of the coordinator's executor (database work, reactions' follow-ups).
  int executor_threads = 4;
  // Database connections (executor threads + ingestor + sweeper need one each).
  int db_pool_size = 8;
  // A PostgreSQL streaming replica of `database_uri` ("" = none): ListRuns,
  // ExportResults and StreamResults (and the web view, through read_router()) read from
  // it while it answers and lags at most `read_max_lag` (store/read_router.h); writes
  // and claims stay on the primary. A replica down at start is not an error.
  std::string read_database_uri;
  absl::Duration read_max_lag = absl::Seconds(10);
  // Agent streams held at most (0 = the descriptor budget alone): at start the soft
  // RLIMIT_NOFILE is raised to the hard limit and the budget is that limit minus a
  // reserve (stream_budget.h); this can only lower it. A hello over it gets a retryable
  // Refusal "coordinator at its stream limit S (RLIMIT_NOFILE M)".
  int max_agent_streams = 0;
  // Descriptors of the web view served beside this coordinator (its database
  // connections and client connections, http::HttpDescriptors), counted in the
  // descriptor reserve; 0 = no web view.
  int http_descriptors = 0;
  // Default nightly schedule: plan file ("" = none), cron (UTC), selector.
  std::string nightly_plan_file;
  std::string nightly_cron = "0 2 * * *";
  std::string nightly_selector;
  // Preflight gates of every run whose plan sets none (submitted or scheduled); empty =
  // none. Checked at start like a plan's (engine::ValidatePreconditions).
  v1::Preconditions default_preconditions;
  // Noise score window and quarantine rules (store::ValidateHealthOptions names the
  // flag of a bad value).
  store::HealthOptions health;
  // Confirmed changes (change_monitor.h): the budget of confirmation runs, and the
  // webhook confirmed changes are POSTed to ("" = none; alerts::AlertWebhook checks it).
  ChangeMonitorOptions changes;
  std::string alert_webhook_url;
  // Monthly case_results partitions kept ahead of this month (0..120; migration 0014):
  // created at start and checked daily by the sweeper (idempotent, safe with several
  // coordinators). A month without a partition still stores its results (the DEFAULT
  // partition), moved into the month's partition when it is created.
  int partitions_ahead = 3;
  // Grace period for in-flight RPCs at shutdown.
  absl::Duration shutdown_grace = absl::Seconds(5);
  // What the sweeper, leases, heartbeat timeouts, outage grace and schedules read the
  // time from; null = the real clock. Not owned; must outlive the coordinator (tests).
  const Clock* clock = nullptr;
};

// OK if `options` can start a coordinator; else InvalidArgument naming the option and
// its allowed range or combination: database_uri required with the PostgreSQL store;
// with the memory store no database_uri, read_database_uri nor memory_database mix-up
// and a loopback (or unix:) listen_address whatever TLS or allow_insecure_remote say
// (it is no production store: a remote fleet's results would vanish at exit); TLS cert and key together,
// a client CA only with them; listen_address a host:port (or unix:/ipv4:/ipv6:), and
// plaintext only on loopback unless allow_insecure_remote; default_preconditions as a
// plan's; max_attempts 1..100; executor_threads 1..64; db_pool_size 2..256; the read
// replica's options (store/read_router.h); max_agent_streams 0..1000000;
// heartbeat_interval >= 100ms and job_lease >= 2 x heartbeat_interval; requeue_timeout
// 0..168h; sweep_interval 10ms..1m; the health options (store::ValidateHealthOptions).
absl::Status CheckCoordinatorOptions(const CoordinatorOptions& options);

}  // namespace fleetmark::service
