// The runs and jobs slice of Store (store.h): runs (create, resolve, list, cancel), their
// jobs (claims, leases, progress, ends, expiry) and case results (insert, import,
// export). Services that use only runs and jobs take a RunStore&.
// Thread-safety: every method may be called from any thread; each call borrows one
// pooled connection for its duration. Errors: Unavailable when the database is down
// (callers retry), NotFound for unknown ids/names, InvalidArgument for malformed ids,
// AlreadyExists for duplicate names, FailedPrecondition for forbidden state changes.
// Ids are UUID strings. Times are absl::Time (UTC).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "coordinator/store/new_run.h"
#include "fleetmark/v1/agent.pb.h"
#include "fleetmark/v1/control.pb.h"
#include "fleetmark/v1/host.pb.h"
#include "fleetmark/v1/result.pb.h"

namespace fleetmark::store {

// A job claimed for an agent: what goes down the stream as a JobAssignment.
struct ClaimedJob {
  std::string agent_id;
  v1::JobAssignment assignment;
};

// A job whose lease expired, after the expiry sweep handled it.
struct ExpiredJob {
  std::string job_id;
  std::string run_id;
  std::string agent_id;
  bool failed = false;  // true: failed as infrastructure; false: re-queued (or done)
  bool done = false;    // every case of the job is stored: ended done, not re-queued
  uint32_t attempts = 0;
};

// How an agent reported a job's end.
struct JobOutcome {
  bool ok = false;
  bool cancelled = false;
  std::string message;  // benchmark failure reason when !ok
  // The agent's preflight gates kept failing (JobFinished.deferred): the job fails as
  // infrastructure (failure_kind 'infrastructure'), never as a benchmark failure.
  bool deferred = false;
};

// The outcome of storing one result.
struct ResultOutcome {
  std::string result_id;
  bool stored = false;  // inserted now
  // Already stored (a replay), or a result of the same job and case is (another
  // attempt's, e.g. of a second process with a copied credential): ack with
  // duplicate=true, nothing written.
  bool duplicate = false;
  bool rejected = false;  // malformed or not this agent's job: do not retry
  std::string message;    // why rejected
};

// What `fleetmark results import` stored (Store::ImportResults).
struct ImportOutcome {
  struct Device {
    std::string name;  // ResultsDevice.agent in the document
    // The agent its new results are stored under ("" when it had none new).
    std::string agent_id;
    std::string agent_name;
    bool matched = false;  // an agent of that machine; false: an imported device record
    size_t stored = 0;
    size_t already_stored = 0;  // stored before (by any run), or earlier in the document
  };
  std::string run_id;           // the new run; "" when nothing new was stored
  std::vector<Device> devices;  // in the document's order
  size_t stored = 0;
  size_t already_stored = 0;
};

// Cancelling a run: its state after, plus the jobs whose agents must be told.
struct CancelledRun {
  v1::RunInfo run;
  std::vector<std::pair<std::string, std::string>> agent_jobs;  // (agent_id, job_id) that were assigned/running
};

// What an export of a run holds, without the results' contents: the run, its agents'
// hosts (by agent name) and, in export order (agent name, case id), each result's id
// and the size of its stored serialized CaseResult, so a reader can cut byte-bounded
// pages and load them one at a time (Store::LoadResults).
struct ResultExportIndex {
  struct Entry {
    std::string result_id;
    size_t bytes = 0;
  };
  v1::RunInfo run;
  std::map<std::string, v1::HostInfo> hosts;
  std::vector<Entry> results;
};

// Runs, jobs and case results; PgStore and MemoryStore implement it as Store.
class RunStore {
 public:
  virtual ~RunStore() = default;

  // Stores the plan, the run and one queued job per agent in one transaction; the
  // queued jobs' agents are notified (notification.h: queued) on commit.
  virtual absl::StatusOr<v1::RunInfo> CreateRun(const NewRun& run) = 0;
  // CreateRun, and in the same transaction assigns the new jobs of `idle_agent_ids`
  // (agents this coordinator knows to be connected and idle) as ClaimJobs would, so they
  // can be pushed right after the commit without another round trip. Returns the run
  // id and the claimed jobs. AlreadyExists if another coordinator claimed a job for one
  // of these agents at the same moment (nothing is stored; use CreateRun then).
  // The RunInfo is built from the inserted rows: no read-back, so submitting to a
  // thousand agents does not query the run while its assignments are being pushed.
  struct CreatedRun {
    std::string run_id;
    v1::RunInfo run;  // as GetRun returns it right after the commit
    std::vector<ClaimedJob> claimed;
  };
  virtual absl::StatusOr<CreatedRun> CreateRunAndClaim(const NewRun& run,
                                                       const std::vector<std::string>& idle_agent_ids,
                                                       absl::Duration lease) = 0;
  virtual absl::StatusOr<v1::RunInfo> GetRun(const std::string& run_id) = 0;
  // The full run id that `id_or_prefix` names (every entry point taking a run id from a
  // person resolves it here first): a full UUID (any case) that is a job's id gives that
  // job's run (`agents list` shows job ids), any other is returned lower-cased (an
  // unknown one is then NotFound where it is used); otherwise a
  // prefix of the id's text form with at least 6 hex digits, case-insensitive, matching
  // exactly one run. InvalidArgument naming the field `run_id` and the rule for a short
  // or non-hex prefix; InvalidArgument naming two of the runs for a prefix matching
  // several ("..." after them only when there are more than two); NotFound if no run
  // matches. At most three rows are read.
  virtual absl::StatusOr<std::string> ResolveRunId(const std::string& id_or_prefix) = 0;
  // Newest first; limit 1..1000.
  virtual absl::StatusOr<std::vector<v1::RunInfo>> ListRuns(int limit) = 0;
  // Cancels queued/assigned/running jobs (the assigned/running ones are notified:
  // ended); FailedPrecondition if the run already ended.
  virtual absl::StatusOr<CancelledRun> CancelRun(const std::string& run_id) = 0;

  // Claims, for each agent in `agent_ids` that has no assigned/running job, its oldest
  // queued job (FOR UPDATE SKIP LOCKED): status assigned, attempts + 1, lease now + `lease`.
  // One job per host: an agent on one host with an agent holding an assigned/running job
  // (or served first in this call) claims nothing, unless both have exclusive_cpus
  // (coordinator/scheduler/same_host.h TakeTurns); CreateRunAndClaim likewise.
  // A job claimed again (attempt > 1) carries the case ids of its stored results
  // (JobAssignment.stored_case_ids; `cancelled` placeholders do not count), so the
  // agent measures only the rest.
  virtual absl::StatusOr<std::vector<ClaimedJob>> ClaimJobs(const std::vector<std::string>& agent_ids,
                                                            absl::Duration lease) = 0;
  // An agent reconnected saying it still runs `job_id`: keeps it (status running,
  // lease renewed) and returns true; false if the job is not this agent's live job
  // (ended, cancelled, or re-queued and claimed elsewhere) — the agent must stop it.
  virtual absl::StatusOr<bool> ResumeJob(const std::string& job_id, const std::string& agent_id,
                                         absl::Duration lease) = 0;
  // What an agent said about its job: accepted it (no progress) or finished cases.
  struct JobUpdate {
    std::string job_id;
    std::string agent_id;
    bool has_progress = false;
    uint32_t cases_done = 0;  // with has_progress; <= cases_total
    uint32_t cases_total = 0;
  };
  // Marks the jobs running, records progress and renews their leases to now + `lease`,
  // in one statement and one transaction (group commit of many agents' messages).
  // Updates naming a job that is not the agent's live job (ended, re-queued) change
  // nothing. Several updates of one job: the last progress wins. InvalidArgument
  // (nothing written) naming the field if an id is not a UUID or cases_done >
  // cases_total.
  virtual absl::Status UpdateJobs(const std::vector<JobUpdate>& updates, absl::Duration lease) = 0;
  // One-job forms of UpdateJobs.
  virtual absl::Status MarkJobRunning(const std::string& job_id, const std::string& agent_id, absl::Duration lease) = 0;
  virtual absl::Status UpdateJobProgress(const std::string& job_id, const std::string& agent_id, uint32_t cases_done,
                                         uint32_t cases_total, absl::Duration lease) = 0;
  // Ends a job (done / failed as a benchmark failure, or as infrastructure when
  // deferred / cancelled) and updates its run. A job reported done whose run records
  // its case ids (NewRun::case_ids) but which has fewer cases with a stored result (of
  // any status: a cancelled placeholder accounts for its case) is never done: it fails
  // as infrastructure, "infrastructure: the agent reported the job done, but N of its M
  // cases have no stored result ...", so its run fails. In the same transaction, under the agent
  // row's lock, updates the agent's health (options.health): a deferred job extends its
  // deferred streak (rule c), any other job that ran resets it; a job with calibration
  // results (IsCalibrationLabel) recomputes the noise score over the agent's newest K
  // nights since its last release and applies rules (a) and (b). A quarantine, once
  // set, stays (reason and since unchanged) until ReleaseAgent.
  //
  // Group commit of many agents' JobFinished (a fan-out's 1 000 job ends come within
  // milliseconds): all of `ends` in one transaction, which locks the jobs, then their
  // agents, then their runs, each in id order, and recounts each run once (not once per
  // job: a run's row lock then serialised every end and each end recounted every job,
  // O(jobs^2) per run). One status per item, in order: OK (ended now, or already ended
  // — cancelled, expired — so nothing changed), NotFound (not a job of this agent),
  // InvalidArgument naming the field (an id is not a UUID); such items write nothing
  // and the others are still written. The StatusOr's own error is the transaction's
  // (Unavailable: nothing written).
  struct JobEnd {
    std::string job_id;
    std::string agent_id;
    JobOutcome outcome;
  };
  virtual absl::StatusOr<std::vector<absl::Status>> FinishJobs(const std::vector<JobEnd>& ends) = 0;
  // One-job form of FinishJobs: its item's status, or the transaction's error.
  absl::Status FinishJob(const std::string& job_id, const std::string& agent_id, const JobOutcome& outcome) {
    absl::StatusOr<std::vector<absl::Status>> statuses = FinishJobs({JobEnd{job_id, agent_id, outcome}});
    return statuses.ok() ? statuses->front() : statuses.status();
  }
  // Of `job_ids`, those that ended (done, failed, cancelled) — e.g. cancelled through
  // another coordinator — so their agents can be told to stop.
  virtual absl::StatusOr<std::vector<std::string>> EndedJobs(const std::vector<std::string>& job_ids) = 0;
  // Handles jobs whose lease expired: done when each case of the job's run has a stored
  // result that is not a cancelled placeholder (whatever its attempts: only the report
  // was missing), else re-queued while attempts < max_attempts (to be taken back within
  // options.requeue_timeout), else failed with "infrastructure: agent <name> lost ...".
  // Also fails queued jobs past their expiry (NewRun::queue_expiry)
  // with "infrastructure: expired: agent <name> did not take the job ...", and
  // re-queued jobs not taken back in time with their re-queue message and "; not taken
  // back by <time> UTC (coordinator --requeue_timeout)" (failed = true). Updates the
  // runs. Notifies the re-queued jobs' agents (queued) and the failed ones (ended) on
  // commit.
  virtual absl::StatusOr<std::vector<ExpiredJob>> ExpireLeases() = 0;
  // The agent (re)connected and runs nothing but `keep_job_id` ("" = nothing): its
  // other assigned/running jobs are handled like expired leases at once.
  virtual absl::StatusOr<std::vector<ExpiredJob>> ReleaseAgentJobs(const std::string& agent_id,
                                                                   const std::string& keep_job_id) = 0;

  // Stores `results` in one transaction (COPY'd; ids already stored are skipped: in
  // PgStore a batch whose COPY meets a stored id is redone with INSERT ... ON CONFLICT
  // DO NOTHING, and for a minute after such a replay ids are looked up before the COPY);
  // returns one outcome per input, same order:
  // the first occurrence of a new id is stored, replays are duplicates. Results whose
  // id is not a UUID, whose job is not this agent's, whose case id is not one of the
  // run's (NewRun::case_ids), or whose values are implausible (NaN/Infinity statistics,
  // negative samples: internal::CheckResultValues) are rejected (not stored), with a
  // message naming the field.
  // Unavailable/Aborted: nothing was committed; the caller retries and must not ack.
  struct AgentResult {
    std::string agent_id;
    const v1::CaseResult* result;
  };
  virtual absl::StatusOr<std::vector<ResultOutcome>> InsertResults(const std::vector<AgentResult>& results) = 0;

  // `fleetmark results import`: stores `document`'s results (a results file) in one new
  // run marked imported (RunInfo.imported; plan name, quick flag and times from the
  // document; status done, one done job per device with new results; submitted_by as
  // given), in one transaction, one import at a time (an advisory lock). Idempotent by
  // result id: results stored before (by any run) are counted as already stored and
  // written nowhere; with nothing new, no run is created (run_id ""). Each device's new
  // results go to the agent of its machine (result_import.h MachineOf), else to a new
  // device record marked imported (AgentInfo.imported, state "imported", named by
  // ImportedAgentName): no credential, never online, never selected. InvalidArgument
  // naming the field, nothing stored, for a document CheckImport refuses (an unknown
  // schema_version, a result an agent could not store).
  virtual absl::StatusOr<ImportOutcome> ImportResults(const v1::ResultsDocument& document,
                                                      const std::string& submitted_by) = 0;

  // A run with its results (optionally of one agent) and the hosts of its agents. A
  // case measured again by a re-run job (after a lost agent) appears once: its newest result.
  // NotFound for an unknown run, or an agent with no job in it. The whole run in memory:
  // for large runs use ListExportResults and LoadResults.
  virtual absl::StatusOr<v1::ExportResultsResponse> ExportResults(const std::string& run_id,
                                                                  const std::string& agent_name) = 0;
  // The index of what ExportResults(run_id, agent_name) returns (same rows, same order,
  // same errors), reading no result's contents.
  virtual absl::StatusOr<ResultExportIndex> ListExportResults(const std::string& run_id,
                                                              const std::string& agent_name) = 0;
  // The stored results `result_ids` (UUIDs), in that order. NotFound naming an id that
  // is not stored (results are never deleted: an id from ListExportResults is).
  virtual absl::StatusOr<std::vector<v1::CaseResult>> LoadResults(const std::vector<std::string>& result_ids) = 0;
  // Records that the whole run `run_id` was exported now (runs.exported_at; `fleetmark
  // export` asks it through ExportResultsRequest.record_export). NotFound for an unknown run.
  virtual absl::Status RecordRunExported(const std::string& run_id) = 0;
};

}  // namespace fleetmark::store
