// Sweeper: the coordinator's housekeeping thread. Every heartbeat interval it flushes
// the connected agents' liveness (renewing their jobs' leases), ends silent streams and
// the streams of revoked or removed agents, and follows the database's health (gRPC
// health NOT_SERVING from a failed flush to the next that succeeds); every sweep
// interval, or at once when RequestSweep asks, it expires leases, keeps the result
// partitions ahead, fires due schedules, stops jobs that ended on another coordinator,
// wakes idle agents and runs the change monitor.
//
// Every interval and timeout is steady time from the injected Clock; its pauses are real
// steady time (a fake clock moves only when told to). Leases themselves are stamped with
// the database's now() (docs/architecture.md, "Where time comes from").
//
//   Sweeper sweeper(parts, options, clock);
//   FLEETMARK_RETURN_IF_ERROR(sweeper.EnsurePartitions());  // before the server starts
//   sweeper.Start(health);                                  // after it started
//   ...
//   sweeper.Stop();                                         // joins the thread
//
// Thread-safety: RequestSweep and EndRevokedAgents may be called from any thread;
// EnsurePartitions before Start; Start and Stop once each, from the owner.
#pragma once

#include <set>
#include <string>
#include <thread>

#include <grpcpp/health_check_service_interface.h>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "coordinator/scheduler/scheduler.h"
#include "coordinator/service/agent_registry.h"
#include "coordinator/service/change_monitor.h"
#include "coordinator/service/dispatcher.h"
#include "coordinator/service/executor.h"
#include "coordinator/store/agent_store.h"
#include "coordinator/store/retention_store.h"
#include "coordinator/store/run_store.h"
#include "coordinator/store/token_store.h"
#include "engine/common/clock.h"

namespace fleetmark::service {

// What the sweeper works on; not owned, each outlives the Sweeper.
struct SweeperParts {
  // The store's slices it uses (one Store may serve all four).
  store::TokenStore* tokens = nullptr;         // revoked or removed agents
  store::AgentStore* agents = nullptr;         // liveness flushes
  store::RunStore* runs = nullptr;             // lease expiry, jobs ended elsewhere
  store::RetentionStore* retention = nullptr;  // result partitions ahead
  AgentRegistry* registry = nullptr;
  Dispatcher* dispatcher = nullptr;
  Executor* executor = nullptr;  // retries of a failed revocation check
  scheduler::ScheduleRunner* schedules = nullptr;
  ChangeMonitor* changes = nullptr;
};

struct SweeperOptions {
  absl::Duration heartbeat_interval = absl::Seconds(5);
  absl::Duration job_lease = absl::Seconds(30);
  absl::Duration sweep_interval = absl::Seconds(1);
  // How long the database may fail before agent streams are ended (agents spool).
  absl::Duration db_outage_grace = absl::Seconds(5);
  int partitions_ahead = 3;  // months of case_results partitions kept ahead
};

class Sweeper {
 public:
  Sweeper(const SweeperParts& parts, const SweeperOptions& options, const Clock& clock);
  ~Sweeper();  // Stop()
  Sweeper(const Sweeper&) = delete;
  Sweeper& operator=(const Sweeper&) = delete;

  // The case_results partitions of this month and partitions_ahead more; checked again a
  // day later (a minute later after an error, which is logged and returned).
  absl::Status EnsurePartitions();

  // Starts the thread. `health`: the gRPC server's health statuses (owned by the
  // server, which outlives the sweeper's thread: Stop before the server shuts down).
  // Leases expire no earlier than one lease from now.
  void Start(grpc::HealthCheckServiceInterface* health);

  // Ends the thread (waits for its turn in progress). Idempotent.
  void Stop();

  // The next sweep runs now rather than at the end of its pause.
  void RequestSweep();

  // Ends the streams of agents whose enrollment token was revoked, or that were removed
  // (possibly through another coordinator). A failed check (the database busy or
  // briefly unreachable) is retried on the executor a few times a second apart rather
  // than left to the next liveness flush.
  void EndRevokedAgents(int retries_left = kRevocationRetries);

  static constexpr int kRevocationRetries = 5;

 private:
  void Loop();
  bool Woken() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_ || sweep_requested_; }
  // A gap between two turns of Loop longer than this is a stall of the coordinator:
  // twice its longest pause (the heartbeat interval), room for a turn's work.
  absl::Duration StallLimit() const { return 2 * options_.heartbeat_interval; }
  void Sweep(bool expire);
  void EndStreamsForOutage(absl::Duration outage);
  bool FlushLiveness(absl::Time now);
  void StopEndedJobs();
  void ExpireLeases();

  const SweeperParts parts_;
  const SweeperOptions options_;
  const Clock& clock_;
  grpc::HealthCheckServiceInterface* health_ = nullptr;  // set by Start
  absl::Time started_;
  std::thread thread_;

  // Sweeper thread only (and EnsurePartitions before Start):
  absl::Time next_partitions_check_ = absl::InfinitePast();
  // The end of this coordinator's last stall (Loop).
  absl::Time stall_ended_ = absl::InfinitePast();
  // Agents whose lease renewals failed (database unreachable) since the last
  // successful flush.
  std::set<std::string> unrecorded_agents_;
  // Failed liveness flushes in a row, the first one's time and the last warning logged.
  int liveness_failures_ = 0;
  absl::Time first_liveness_failure_;
  absl::Time last_liveness_warning_ = absl::InfinitePast();

  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool sweep_requested_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace fleetmark::service
