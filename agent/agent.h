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
// Identity: the first session presents the enrollment token (read from `token_file` at
// each attempt); the credential from the Welcome is stored in the state directory
// (agent/credential_store.h) and presented afterwards. A refused credential is dropped
// and the token tried once more; a non-retryable refusal ends Run() with an error.
//
//   FLEETMARK_ASSIGN_OR_RETURN(auto agent, Agent::Create(options, identity, executor));
//   std::thread stopper([&] { WaitForSignal(); agent->Shutdown(); });
//   absl::Status status = agent->Run();
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/backoff.h"
#include "agent/job_executor.h"
#include "agent/job_runner.h"
#include "agent/spool.h"
#include "agent/spool_lock.h"
#include "fleetmark/v1/agent.pb.h"
#include "fleetmark/v1/host.pb.h"

namespace fleetmark::agent {

struct TlsOptions {
  std::string ca_file;    // PEM roots to verify the coordinator; "" = plaintext
  std::string cert_file;  // PEM client certificate for mutual TLS (with key_file)
  std::string key_file;   // PEM private key of cert_file
  // Overrides the name checked in the coordinator's certificate (useful with IP
  // literals and certificates issued for a host name). "" = the target's host.
  std::string server_name_override;
};

struct AgentOptions {
  std::string coordinator;                    // host:port; IP literals need no DNS (agent/target.h)
  std::string token_file;                     // enrollment token; may be "" once a credential is stored
  std::string name;                           // unique in the fleet: [A-Za-z0-9._-]{1,64}
  std::map<std::string, std::string> labels;  // agent/labels.h
  std::string spool_dir;                      // spool + credential; created if missing
  TlsOptions tls;
  BackoffOptions backoff;
  SpoolOptions spool;
  // A session that gets no Welcome/Refusal within this time is abandoned.
  absl::Duration welcome_timeout = absl::Seconds(30);
  // Used until the Welcome gives an interval (or if it gives 0).
  absl::Duration default_heartbeat_interval = absl::Seconds(10);
  // gRPC HTTP/2 keepalive pings (detect a dead path behind NAT).
  absl::Duration keepalive_time = absl::Seconds(20);
  absl::Duration keepalive_timeout = absl::Seconds(10);
  // Test hook (integration tests only; keep 0 in production): after a job's JobFinished
  // is spooled, wait this long before sending it, so that a test can kill the agent
  // between the two. 0 <= finish_send_delay <= 1h.
  absl::Duration finish_send_delay = absl::ZeroDuration();
};

// Checks every field; InvalidArgument naming the field, value and allowed form.
absl::Status ValidateAgentOptions(const AgentOptions& options);

// What the agent says about itself in the hello.
struct AgentIdentity {
  fleetmark::v1::HostInfo host;
  std::string engine_version;
  std::vector<std::string> strategies;
  std::vector<std::string> workloads;
  std::vector<std::string> scenarios;
};

// The identity of this build: engine version and the registry's names
// (engine/common/registry.h), with `host` as given.
AgentIdentity BuildIdentity(fleetmark::v1::HostInfo host);

// Counters for logs and tests. All monotonic since Create.
struct AgentStats {
  uint64_t sessions = 0;         // streams opened
  uint64_t welcomes = 0;         // sessions that got a Welcome
  uint64_t results_spooled = 0;  // case results appended to the spool
  uint64_t results_sent = 0;     // result messages written (replays included)
  uint64_t acks = 0;             // ResultAcks received
  uint64_t jobs_started = 0;
  uint64_t jobs_finished = 0;
  uint64_t finishes_confirmed = 0;  // JobFinishedAcks received for a pending report
};

class Agent {
 public:
  // Validates options, creates the spool directory, locks it for this Agent's life
  // (agent/spool_lock.h), opens (recovers) the spool. `executor` runs the jobs. Errors:
  // InvalidArgument for options; FailedPrecondition "spool dir X is in use by another
  // fleetmark-agent (pid N)" when another agent (process or Agent object) holds the
  // spool directory; I/O errors of the lock file and the spool (agent/spool.h).
  static absl::StatusOr<std::unique_ptr<Agent>> Create(AgentOptions options, AgentIdentity identity,
                                                       std::unique_ptr<JobExecutor> executor);
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

  AgentStats stats() const;

 private:
  class Session;
  struct SessionOutcome {
    bool welcomed = false;
    bool refused = false;  // non-retryable Refusal (or auth status) received
    bool used_credential = false;
    bool never_connected = false;  // not welcomed, no refusal, the transport failed
    absl::Status status;           // why the session ended
  };

  Agent(AgentOptions options, AgentIdentity identity, std::unique_ptr<JobExecutor> executor,
        std::unique_ptr<SpoolLock> spool_lock, std::unique_ptr<Spool> spool);

  SessionOutcome RunSession();
  absl::StatusOr<fleetmark::v1::AgentMessage> MakeHello(bool* used_credential);
  // OK if the coordinator's text rules (HelloTextRules) admit `hello`; else
  // InvalidArgument naming the field.
  static absl::Status CheckHello(const fleetmark::v1::Hello& hello);
  void OnWelcome(Session* session, const fleetmark::v1::Welcome& welcome);
  void OnAssignment(Session* session, const fleetmark::v1::JobAssignment& job);
  // Adds to `job.stored_case_ids` the cases of `job` (a repeated attempt) whose results
  // wait in the spool (measured before a restart, not yet stored when the coordinator
  // claimed the job again), so they are not measured twice. Returns how many it added.
  int AddSpooledCases(fleetmark::v1::JobAssignment& job);
  void OnCancellation(const fleetmark::v1::JobCancellation& cancellation);
  void OnAck(const fleetmark::v1::ResultAck& ack);
  void OnFinishedAck(const fleetmark::v1::JobFinishedAck& ack);
  // Forgets the unconfirmed report of `job_id` (memory and spool), if any; returns
  // whether there was one.
  bool DropFinishReport(const std::string& job_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Job events (job thread).
  void OnJobResult(const fleetmark::v1::JobAssignment& job, const fleetmark::v1::CaseResult& result);
  void OnJobProgress(const fleetmark::v1::JobProgress& progress);
  void OnJobFinished(const fleetmark::v1::JobFinished& finished);

  // Queues `message` on the welcomed session, if any; dropped otherwise.
  void SendIfConnected(fleetmark::v1::AgentMessage message);

  const AgentOptions options_;
  const AgentIdentity identity_;
  std::unique_ptr<JobExecutor> executor_;
  std::unique_ptr<SpoolLock> spool_lock_;  // held until destruction (declared first: freed last)
  std::unique_ptr<Spool> spool_;
  std::unique_ptr<JobRunner> runner_;
  absl::BitGen gen_;

  std::atomic<bool> stopping_{false};
  absl::Mutex wait_mu_;  // the backoff sleep waits for stop_requested_
  bool stop_requested_ ABSL_GUARDED_BY(wait_mu_) = false;

  mutable absl::Mutex mu_;
  Session* session_ ABSL_GUARDED_BY(mu_) = nullptr;  // welcomed session, if any
  Session* dialing_ ABSL_GUARDED_BY(mu_) = nullptr;  // current session, welcomed or not
  // Newest finished job whose report is not confirmed yet (also spooled, unless the
  // spool failed); resent after each reconnect. Restored from the spool by Create.
  std::optional<fleetmark::v1::JobFinished> pending_finish_ ABSL_GUARDED_BY(mu_);
  // Job whose report the finish_send_delay test hook holds back ("" = none).
  std::string held_finish_job_id_ ABSL_GUARDED_BY(mu_);
  AgentStats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fleetmark::agent
