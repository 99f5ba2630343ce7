// Chooses the server that answers read-only queries (the web view, `runs list`,
// `export`, `compare`): a PostgreSQL streaming replica (--read_database_uri) while it
// answers and lags at most `max_lag` behind the primary, else the primary. Writes and
// job claims never come here: they always use the primary.
//
// A thread measures the replica's lag (read_replica.h) every `probe_interval`; readers
// only look at the last measurement, so a request never waits for the probe. A read
// that failed on the replica (ReportReplicaFailure) sends reads to the primary until a
// later probe succeeds.
//
//   FLEETMARK_ASSIGN_OR_RETURN(auto router, ReadRouter::Start({.primary_uri = p, .replica_uri = r}));
//   if (router->UseReplica()) ... else ...;
//   ReadRouter::State state = router->state();   // for /healthz and /metrics
//
// Thread-safety: every method is safe from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "coordinator/store/read_replica.h"

namespace fleetmark::store {

struct ReadRouterOptions {
  std::string primary_uri;  // --database_uri
  std::string replica_uri;  // --read_database_uri
  // Reads go to the primary while the replica is more than this behind (1s..1h).
  absl::Duration max_lag = absl::Seconds(10);
  // Lag measured this often (10ms..1m).
  absl::Duration probe_interval = absl::Seconds(1);
};

// InvalidArgument naming the option (read_max_lag, the probe interval, the URIs) and
// its range.
absl::Status ValidateReadRouterOptions(const ReadRouterOptions& options);

class ReadRouter {
 public:
  // Which server reads go to, and why.
  struct State {
    bool replica = false;    // true: reads go to the replica
    std::string reason;      // why the primary ("" while the replica serves)
    bool lag_known = false;  // a measurement succeeded since the last failure
    ReplicaLag lag;          // the last successful measurement
    uint64_t probes = 0;     // measurements attempted
  };

  // Validates `options` and starts the probe thread, which measures once before this
  // returns (so the first request already knows). A replica that is down is not an
  // error: reads go to the primary until it answers.
  static absl::StatusOr<std::unique_ptr<ReadRouter>> Start(const ReadRouterOptions& options);
  ~ReadRouter();  // stops and joins the probe thread

  // Whether the next read should go to the replica.
  bool UseReplica() const;
  // A read on the replica failed with `status` (the server is down, or a connection
  // broke): reads go to the primary until the next successful probe.
  void ReportReplicaFailure(const absl::Status& status);
  State state() const;
  // "replica" or "primary": the server reads go to now (/healthz, the metrics' label).
  std::string ReadServer() const { return UseReplica() ? "replica" : "primary"; }
  const ReadRouterOptions& options() const { return options_; }

 private:
  ReadRouter(ReadRouterOptions options, std::unique_ptr<ReplicaLagProbe> probe);
  void ProbeOnce();
  void ProbeLoop();

  const ReadRouterOptions options_;
  std::unique_ptr<ReplicaLagProbe> probe_;  // used by the probe thread only (after Start)
  mutable absl::Mutex mu_;
  State state_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace fleetmark::store
