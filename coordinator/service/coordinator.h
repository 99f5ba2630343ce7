// fleetmark-coordinator as a library: the gRPC server (AgentService for agents,
// ControlService for the CLI) over the PostgreSQL store, plus the dispatcher, the
// lease sweeper, the result ingestor and the schedule runner. main.cc parses flags
// into CoordinatorOptions and calls Coordinator::Start; tests start one in-process on
// loopback port 0.
//
//   CoordinatorOptions options;
//   options.listen_address = "127.0.0.1:0";
//   options.database_uri = getenv("FLEETMARK_TEST_PG_URI");
//   FLEETMARK_ASSIGN_OR_RETURN(auto coordinator, Coordinator::Start(options));
//   int port = coordinator->port();
//   // ~Coordinator() shuts the server down (deadline: options.shutdown_grace).
// The web view's HTTP server (coordinator/http) is started by main.cc next to it.
// The gRPC port also serves the standard grpc.health.v1.Health service (gRPC's own
// implementation; "" and each fleetmark service SERVING while the database answers the
// sweeper's liveness flushes, NOT_SERVING from a failed one to the next that succeeds
// and from the start of Shutdown) and, unless grpc_reflection is off, gRPC server
// reflection (grpc.reflection.v1alpha.ServerReflection, libgrpc++_reflection).
//
// Thread-safety: Start/port/Shutdown may be called from any thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "engine/common/clock.h"
#include "coordinator/service/change_monitor.h"
#include "coordinator/store/agent_health.h"
#include "coordinator/store/read_router.h"
#include "fleetmark/v1/plan.pb.h"

namespace fleetmark::service {

struct CoordinatorOptions {
  // gRPC listen address "host:port"; port 0 picks a free port (see port()).
  std::string listen_address = "127.0.0.1:7443";
  // PostgreSQL URI (required).
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

class Coordinator {
 public:
  // Opens the database, applies migrations, seeds tokens and the nightly schedule,
  // and starts serving. Errors: InvalidArgument for bad options (naming the option),
  // Unavailable if the database or the port cannot be reached/bound.
  static absl::StatusOr<std::unique_ptr<Coordinator>> Start(const CoordinatorOptions& options);
  virtual ~Coordinator() = default;
  // The bound gRPC port.
  virtual int port() const = 0;
  // Blocks until Shutdown() is called from another thread (or a signal handler thread).
  virtual void Wait() = 0;
  // Stops serving (in-flight RPCs get shutdown_grace). Idempotent.
  virtual void Shutdown() = 0;
  // `GET /healthz`: the newest applied schema version when the database answers and
  // every migration this build embeds is applied. Unavailable when the database cannot
  // be reached (the reason), FailedPrecondition when its schema is behind (naming the
  // missing versions). One database round trip; any thread.
  virtual absl::StatusOr<int> CheckHealth() = 0;
  // Agent streams this coordinator admits (its descriptor budget) and its RLIMIT_NOFILE.
  virtual int stream_budget() const = 0;
  virtual int descriptor_limit() const = 0;
  // `GET /metrics`: the text exposition format 0.0.4 (metrics.h; every metric in
  // docs/operations.md). The fleet gauges (agents, jobs, runs) cost one read-only
  // query; when it fails they are left without samples and the error is counted in
  // fleetmark_database_errors_total. Any thread.
  virtual std::string RenderMetrics() = 0;
  // The router of read-only queries with `read_database_uri`, else null. Lives as long
  // as the coordinator.
  virtual store::ReadRouter* read_router() = 0;
};

}  // namespace fleetmark::service
