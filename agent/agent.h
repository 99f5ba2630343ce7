// The fleetmark agent's connection: dials the coordinator (never listens), says hello
// with its HostInfo, keeps one bidirectional AgentService.Connect stream, sends
// heartbeats, runs assigned jobs one at a time, spools every case result (fsync) before
// sending it and replays the spool after every reconnect; reconnects with exponential
// backoff and full jitter (agent/backoff.h).
//
// A job's end is as durable as its results: the JobFinished report is spooled (fsync)
// after the job's last result and before it is sent, and dropped only on the
// coordinator's JobFinishedAck (or a JobCancellation of that job). Rules for an
// unconfirmed report (after a reconnect or a restart with the same spool_dir):
//   - The hello names its job as running_job_id, so the coordinator keeps the job this
//     agent's (ResumeJob) instead of re-queuing it, or answers with a cancellation if
//     the job ended meanwhile (the report is then dropped).
//   - After the Welcome the spooled results are replayed first, then the report; the
//     coordinator finishes the job only after those results are committed.
//   - The coordinator assigns no other job while this one is live. An assignment of the
//     same job is answered with the report again (the job is not re-run); an assignment
//     of another job means the reported job is no longer live for this agent (it ended,
//     or its lease expired and it was re-queued), so the report is dropped as stale and
//     the new job runs.
//   - A job this agent cancels for its own shutdown (not on the coordinator's word) is
//     not reported: the coordinator re-queues it when the agent is back, as before.
//
// Time (reconnect backoff, heartbeats, the welcome timeout) is read from the injected
// Clock (engine/common/clock.h); the network is behind the Transport seam
// (agent/transport.h). Files: agent/session.h is the protocol state machine,
// agent/session_writer.h the outbound queue and heartbeats, agent/grpc_transport.cc
// the channel and TLS, agent/hello.h the identity and hello, agent/options.h the checks.
//
// Identity: the first session presents the enrollment token (read from `token_file` at
// each attempt); the credential from the Welcome is stored in the state directory
// (agent/credential_store.h) and presented afterwards. A refused credential is dropped
// and the token tried once more; a non-retryable refusal ends Run() with an error.
// Each Agent draws an instance id (AgentIdentity::instance_id) that its hellos carry:
// one identity has one live session fleet-wide, so a hello from another process with
// this agent's credential (a copied credential file) is refused while this one's
// session lives (Refusal.identity_in_use, retryable). Such a refusal stops the running
// job without reporting it, is logged as a warning with the coordinator's reason, and
// is retried at backoff pace.
//
//   FLEETMARK_ASSIGN_OR_RETURN(auto agent, Agent::Create(options, identity, executor));
//   // tests: Agent::Create(options, identity, executor, {.clock = &fake, .transport = ...})
//   std::thread stopper([&] { WaitForSignal(); agent->Shutdown(); });
//   absl::Status status = agent->Run();
#pragma once

#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "agent/hello.h"
#include "agent/job_executor.h"
#include "agent/options.h"
#include "agent/session.h"
#include "agent/spool.h"
#include "agent/spool_lock.h"
#include "agent/transport.h"
#include "engine/common/clock.h"

namespace fleetmark::agent {

// What the agent runs on, for tests to replace. Defaults: the system clock and
// MakeGrpcTransport(options).
struct AgentEnvironment {
  const Clock* clock = nullptr;          // not owned; must outlive the Agent
  std::unique_ptr<Transport> transport;  // owned by the Agent
};

class Agent {
 public:
  // Validates options, creates the spool directory, locks it for this Agent's life
  // (agent/spool_lock.h), opens (recovers) the spool. `executor` runs the jobs. Errors:
  // InvalidArgument for options; FailedPrecondition "spool dir X is in use by another
  // fleetmark-agent (pid N)" when another agent (process or Agent object) holds the
  // spool directory; I/O errors of the lock file and the spool (agent/spool.h).
  static absl::StatusOr<std::unique_ptr<Agent>> Create(AgentOptions options, AgentIdentity identity,
                                                       std::unique_ptr<JobExecutor> executor,
                                                       AgentEnvironment environment = {});
  ~Agent();
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  // Connects and serves until Shutdown() (returns OK) or a non-retryable refusal
  // (returns Unauthenticated with the coordinator's reason; no other error uses that
  // code) or a local fatal error
  // (e.g. an unreadable token file with no stored credential: NotFound /
  // PermissionDenied naming the path). Call once, from one thread.
  absl::Status Run();

  // Stops Run() soon: cancels the running job, closes the stream. Thread-safe,
  // async-signal-unsafe (call it from a normal thread).
  void Shutdown();

  AgentStats stats() const { return session_->stats(); }

 private:
  Agent(AgentOptions options, AgentIdentity identity, std::unique_ptr<JobExecutor> executor,
        std::unique_ptr<SpoolLock> spool_lock, std::unique_ptr<Spool> spool, const Clock& clock,
        std::unique_ptr<Transport> transport);

  // One session: the hello, a stream from the transport, Session::Serve. Sets
  // *used_credential when the hello presented the stored credential.
  SessionOutcome RunSession(bool* used_credential);

  const AgentOptions options_;
  const AgentIdentity identity_;
  const Clock& clock_;
  std::unique_ptr<JobExecutor> executor_;
  std::unique_ptr<SpoolLock> spool_lock_;  // held until destruction (declared first: freed last)
  std::unique_ptr<Spool> spool_;
  std::unique_ptr<Transport> transport_;
  std::unique_ptr<Session> session_;  // declared last: destroyed (its job joined) first
  absl::BitGen gen_;

  absl::Mutex wait_mu_;  // the backoff wait watches stop_requested_
  bool stop_requested_ ABSL_GUARDED_BY(wait_mu_) = false;
};

}  // namespace fleetmark::agent
