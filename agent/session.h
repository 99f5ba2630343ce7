// The agent's side of the AgentService protocol: a state machine over one
// SessionStream at a time (agent/transport.h), kept across reconnects. It writes the
// hello, handles Welcome / Refusal / JobAssignment / JobCancellation / ResultAck /
// JobFinishedAck, runs assigned jobs one at a time (agent/job_runner.h), spools every
// case result and JobFinished report before it is sent (agent/spool.h), and replays
// the spool after each Welcome. A result the spool cannot hold (ENOSPC, EIO, any write
// error) is kept in memory until acked and replayed like a spooled one; its job stops
// and is reported deferred (an infrastructure outcome, never done), and no job starts
// while such results wait unless the spool can take them first. Time (heartbeats, the welcome timeout) comes from the
// injected Clock. The reconnect loop around it is agent/agent.h; the rules of an
// unconfirmed JobFinished report are described there.
//
//   Session session(options, identity, executor.get(), spool.get(), clock);
//   FLEETMARK_ASSIGN_OR_RETURN(auto stream, transport->Open());
//   SessionOutcome outcome = session.Serve(*stream, hello);   // until the stream ends
//
// Thread-safety: Serve from one thread at a time (the agent's Run thread); Stop,
// OpenJobId and stats from any thread. Job events arrive on the job thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "agent/hello.h"
#include "agent/job_executor.h"
#include "agent/job_runner.h"
#include "agent/options.h"
#include "agent/session_writer.h"
#include "agent/spool.h"
#include "agent/transport.h"
#include "engine/common/clock.h"
#include "fleetmark/v1/agent.pb.h"

namespace fleetmark::agent {

// Counters for logs and tests. All monotonic since the Session was made.
struct AgentStats {
  uint64_t sessions = 0;           // streams opened
  uint64_t welcomes = 0;           // sessions that got a Welcome
  uint64_t results_spooled = 0;    // case results appended to the spool
  uint64_t results_unspooled = 0;  // case results the spool could not hold (kept in memory until acked)
  uint64_t results_sent = 0;       // result messages written (replays included)
  uint64_t acks = 0;               // ResultAcks received
  uint64_t jobs_started = 0;
  uint64_t jobs_finished = 0;
  uint64_t finishes_confirmed = 0;  // JobFinishedAcks received for a pending report
};

// How one Serve ended.
struct SessionOutcome {
  bool welcomed = false;
  bool refused = false;          // non-retryable Refusal (or a refusing status) before a Welcome
  bool never_connected = false;  // not welcomed, no refusal, the transport was unavailable
  // Refused (retryable) because another session holds this agent's identity
  // (Refusal.identity_in_use); the running job was stopped, unreported.
  bool identity_in_use = false;
  absl::Status status;  // why the session ended (Cancelled when Stop came first)
};

class Session {
 public:
  // `executor`, `spool` and `clock` are not owned and must outlive the Session. An
  // unconfirmed report in `spool` (from before a restart) becomes the pending one.
  Session(const AgentOptions& options, const AgentIdentity& identity, JobExecutor* executor, Spool* spool,
          const Clock& clock);
  // Cancels the running job and waits for it.
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Writes `hello` on `stream`, then serves the stream until it ends. Returns at once
  // (status Cancelled) after Stop().
  SessionOutcome Serve(SessionStream& stream, const fleetmark::v1::AgentMessage& hello);

  // The job a hello names (Hello.running_job_id): the running one, else the newest
  // finished job whose report is unconfirmed, else "".
  std::string OpenJobId() const;

  // From now on a job that ends cancelled is not reported (the agent's own shutdown,
  // not the coordinator's word); cancels the stream being served and the running job.
  void Stop();
  bool stopping() const { return stopping_.load(); }

  // Stop() and wait for the running job's thread.
  void StopAndWait();

  AgentStats stats() const;

 private:
  void OnWelcome(SessionWriter* writer, const fleetmark::v1::Welcome& welcome);
  void OnAssignment(SessionWriter* writer, const fleetmark::v1::JobAssignment& job);
  // Adds to `job.stored_case_ids` the cases of `job` (a repeated attempt) whose results
  // wait in the spool (measured before a restart, not yet stored when the coordinator
  // claimed the job again), so they are not measured twice. Returns how many it added.
  int AddSpooledCases(fleetmark::v1::JobAssignment& job);
  void OnCancellation(const fleetmark::v1::JobCancellation& cancellation);
  // Refusal.identity_in_use: stops the running job without reporting it, and waits for it.
  void OnIdentityInUse(const std::string& reason);
  void OnAck(const fleetmark::v1::ResultAck& ack);
  void OnFinishedAck(const fleetmark::v1::JobFinishedAck& ack);
  // Forgets the unconfirmed report of `job_id` (memory and spool), if any; returns
  // whether there was one.
  bool DropFinishReport(const std::string& job_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Moves the results held in memory into the spool, in order; false (with why in
  // *error) at the first the spool still cannot hold.
  bool SpoolHeldResults(std::string* error) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Job events (job thread).
  void OnJobResult(const fleetmark::v1::JobAssignment& job, const fleetmark::v1::CaseResult& result);
  void OnJobProgress(const fleetmark::v1::JobProgress& progress);
  void OnJobFinished(const fleetmark::v1::JobFinished& finished);

  const AgentOptions& options_;
  const AgentIdentity& identity_;
  Spool* const spool_;
  const Clock& clock_;
  std::unique_ptr<JobRunner> runner_;
  std::atomic<bool> stopping_{false};

  mutable absl::Mutex mu_;
  SessionWriter* writer_ ABSL_GUARDED_BY(mu_) = nullptr;   // of the welcomed stream, if any
  SessionStream* serving_ ABSL_GUARDED_BY(mu_) = nullptr;  // stream being served, welcomed or not
  // Newest finished job whose report is not confirmed yet (also spooled, unless the
  // spool failed); resent after each reconnect.
  std::optional<fleetmark::v1::JobFinished> pending_finish_ ABSL_GUARDED_BY(mu_);
  // A job stopped because another session holds this agent's identity (it owns the
  // agent's jobs now): its end is not reported.
  std::string displaced_job_ ABSL_GUARDED_BY(mu_);
  // Results the spool could not hold (a full disk, an I/O error), in the order they
  // came: sent like spooled ones, replayed after each Welcome, dropped on their acks.
  // While any is here no job starts (it is reported deferred) unless they can be
  // spooled first. Lost if the agent stops before they are acked.
  std::vector<fleetmark::v1::CaseResult> unspooled_ ABSL_GUARDED_BY(mu_);
  AgentStats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fleetmark::agent
