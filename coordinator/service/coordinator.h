// fleetmark-coordinator as a library: the gRPC server (AgentService for agents,
// ControlService for the CLI) over the PostgreSQL store (or the in-memory one,
// CoordinatorOptions::store: tests and demos), plus the dispatcher, the
// lease sweeper, the result ingestor and the schedule runner. main.cc parses flags
// into CoordinatorOptions (coordinator_options.h) and calls Coordinator::Start; tests
// start one in-process on loopback port 0. coordinator.cc is the wiring only: the sweep
// loop is sweeper.h's, GET /metrics' text coordinator_metrics.h's, the TLS credentials
// server_tls.h's, the nightly schedule nightly_schedule.h's.
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
#include "coordinator/service/coordinator_options.h"  // CoordinatorOptions
#include "coordinator/store/read_router.h"

namespace fleetmark::service {

class Coordinator {
 public:
  // Opens the database (or the memory store's MemoryDatabase, whose notifications then
  // reach this coordinator as LISTEN would), applies migrations, seeds tokens and the nightly schedule,
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
