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
// Store is the interface the services use; it has no libpqxx types (only
// coordinator/store/ includes <pqxx/...>). Store::Open returns the PostgreSQL
// implementation (coordinator/store/pg_store.h); coordinator/store/memory_store.h is the
// in-memory one (tests without PostgreSQL). Both pass one conformance suite
// (tests/coordinator/store_conformance_test.cc).
// Thread-safety: every method may be called from any thread; each call borrows one
// pooled connection for its duration. Errors: Unavailable when the database is down
// (callers retry), NotFound for unknown ids/names, InvalidArgument for malformed ids,
// AlreadyExists for duplicate names, FailedPrecondition for forbidden state changes.
// Ids are UUID strings. Times are absl::Time (UTC).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "coordinator/store/agent_health.h"
#include "coordinator/store/change_records.h"
#include "coordinator/store/connection_options.h"
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

// What an agent's hello registers.
struct AgentRegistration {
  // "" for a new enrollment; else the agent id its credential authenticated.
  std::string agent_id;
  std::string name;
  // SHA-256 (hex) of the credential issued in Welcome (new enrollments only).
  std::string credential_sha256;
  std::string token_id;  // the enrollment token used (new enrollments only)
  v1::HostInfo host;
  std::map<std::string, std::string> labels;
  std::string engine_version;
  std::vector<std::string> strategies, workloads, scenarios;
  // Id of the stream registering the agent; SetAgentOffline only acts for that stream.
  std::string session_id;
  // Hello.instance_id of the registering process ("" from agents before it: never the
  // process holding a session).
  std::string instance_id;
  // Hello.machine_id, boot_id, exclusive_cpus: the host identity the same-host rule
  // compares (coordinator/scheduler/same_host.h); "" = unknown.
  std::string machine_id;
  std::string boot_id;
  bool exclusive_cpus = false;
  // Whether the recorded session `session_id` is one this coordinator process opened and
  // has seen end (certain knowledge, unlike a silence); null = knows of none. Called
  // inside RegisterAgent's transaction: must return at once and not call the store.
  std::function<bool(const std::string& session_id)> session_ended_here;
};

// An agent's stored identity, for authenticating a hello with a credential.
struct AgentIdentity {
  std::string agent_id;
  std::string name;
  std::string credential_sha256;
  bool token_revoked = false;  // its enrollment token was revoked since
};

// An agent as matched by selectors: what the selector language can ask about.
// What a selector matches of an agent besides its name (Selector::Matches): written by
// its registrations (hellos). Immutable once built, so summaries share it.
struct AgentProfile {
  v1::HostInfo host;
  std::map<std::string, std::string> labels;
};

struct AgentSummary {
  std::string agent_id;
  std::string name;
  bool online = false;
  std::shared_ptr<const AgentProfile> profile;  // never null
  // Quarantined agents are skipped by selectors without `health=any`.
  bool quarantined = false;
  std::string quarantine_reason;
};

// What `agents release` ended.
struct ReleasedAgent {
  std::string agent_id;
  std::string reason;  // why it was quarantined
  absl::Time quarantined_at;
};

// What `agents remove` did.
struct RemovedAgent {
  std::string agent_id;
  std::vector<std::string> failed_jobs;  // its unfinished jobs, now failed
};

// Liveness reported by a connected agent since the last flush.
struct AgentLiveness {
  std::string agent_id;
  absl::Time last_seen;
  uint64_t rss_bytes = 0;
  double cpu_seconds = 0;
  // The stream it was heard on: recorded only while that stream holds the agent's
  // session (a displaced stream renews nothing).
  std::string session_id;
};

struct NewRun {
  v1::Plan plan;  // validated by the caller
  std::string selector;
  bool quick = false;
  std::string filter;
  std::string submitted_by;
  std::vector<std::string> agent_ids;  // one job each; must be non-empty
  uint32_t max_attempts = 3;           // 1..100
  uint32_t cases_total = 0;            // per job, from ExpandCases
  // The case ids each job measures (after --quick and --filter); results for other case
  // ids are rejected. Empty: not recorded, results are not checked against the plan.
  std::vector<std::string> case_ids;
  // > 0: each job expires this long after the run is created: a job still queued then
  // (its agent never took it, e.g. it stayed offline) fails as infrastructure at the
  // next ExpireLeases. 0 = jobs wait for their agents as long as it takes.
  absl::Duration queue_expiry = absl::ZeroDuration();
};

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

// A monthly partition of case_results (migration 0014): results of the runs created in
// [from, to) (UTC calendar month).
struct ResultPartition {
  std::string name;  // e.g. "case_results_y2026m03"
  absl::Time from;
  absl::Time to;
  int64_t estimated_rows = 0;  // pg_class.reltuples (as of the last ANALYZE; -1 = never analyzed)
};

// What PruneResults drops.
struct PruneOptions {
  // Partitions whose range ends at or before now - older_than go (1h <= older_than <=
  // 36500 days: CheckRetention in coordinator/service/retention.h).
  absl::Duration older_than = absl::ZeroDuration();
  bool force = false;    // also runs never exported
  bool dry_run = false;  // answer what would go, change nothing
};
struct PruneOutcome {
  absl::Time cutoff;                        // now - older_than (database clock)
  std::vector<ResultPartition> partitions;  // dropped (dry run: would be), oldest first
  std::vector<std::string> run_ids;         // the runs created in them, deleted with their jobs
};

class Store {
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

  // --- enrollment tokens (only hashes are stored) ---
  // AlreadyExists if `token_id` exists.
  virtual absl::Status CreateEnrollmentToken(const std::string& token_id, const std::string& sha256_hex,
                                             const std::string& description) = 0;
  // Inserts the token unless a token with this hash exists (seeding from a file).
  virtual absl::Status EnsureEnrollmentToken(const std::string& token_id, const std::string& sha256_hex,
                                             const std::string& description) = 0;
  // NotFound naming the id if unknown; FailedPrecondition saying when if it was
  // already revoked (nothing changes). Notifies (notification.h: disconnect) the agents
  // enrolled with it on commit.
  virtual absl::Status RevokeEnrollmentToken(const std::string& token_id) = 0;
  // The token id for a hash; NotFound if unknown, PermissionDenied if revoked.
  virtual absl::StatusOr<std::string> FindEnrollmentToken(const std::string& sha256_hex) = 0;
  // Every token, oldest first, with the number of agents enrolled with it. Neither the
  // secret nor its hash is returned.
  virtual absl::StatusOr<std::vector<v1::TokenInfo>> ListEnrollmentTokens() = 0;
  // Of `agent_ids` (connected agents), those that must be disconnected: removed
  // (`agents remove`, reason kAgentRemovedReason) or enrolled with a revoked token
  // (reason "enrollment token <id> revoked"), ordered by agent id. One statement.
  // InvalidArgument naming `agent_ids[]` if an id is not a UUID.
  // With `session_ids` (parallel to `agent_ids`: the stream this coordinator serves each
  // agent on), also the agents whose identity another session holds now (a takeover:
  // RegisterAgent), with identity_in_use and a reason naming where it is held.
  // InvalidArgument naming `session_ids` when the sizes differ.
  struct Disconnect {
    std::string agent_id;
    std::string reason;
    bool identity_in_use = false;  // displaced by another session (else removed or revoked)
  };
  virtual absl::StatusOr<std::vector<Disconnect>> AgentsToDisconnect(
      const std::vector<std::string>& agent_ids, const std::vector<std::string>& session_ids = {}) = 0;

  // --- agents ---
  // The agent (not removed) named `name`; NotFound if none.
  virtual absl::StatusOr<AgentIdentity> FindAgentByName(const std::string& name) = 0;
  // Registers a hello: with registration.agent_id empty, a new enrollment, which gets a
  // new agent id, or AlreadyExists (naming `fleetmark agents remove NAME`) if an agent
  // (not removed) has the name — atomic across coordinators (a unique index); else the
  // reconnect of that agent (authenticated by its credential by the caller), NotFound
  // if it was removed meanwhile. Marks it online (owned by this coordinator and this
  // session), records a host snapshot when the host changed; returns its agent id.
  // One identity has one live session fleet-wide: a reconnect takes the agent's session
  // only if the recorded one is not live (offline, or silent for
  // StoreOptions::online_window), is this same session, comes from the same process
  // (registration.instance_id, non-empty: its old stream is stale) or ended here
  // (registration.session_ended_here). Otherwise FailedPrecondition starting with
  // kIdentityInUsePrefix, naming the coordinator holding it and how long ago it was heard
  // (nothing written). Taking a session another process held notifies its coordinator
  // (disconnect) on commit.
  virtual absl::StatusOr<std::string> RegisterAgent(const AgentRegistration& registration) = 0;
  // `fleetmark agents remove NAME`: marks the agent (not removed) named `name` removed.
  // Its results, jobs and host snapshots stay; its credential stops working
  // (FindAgentByName no longer finds it), it is never selected, listed only with
  // include_removed, and its name may be enrolled again (a new agent id). Its queued,
  // assigned and running jobs fail as infrastructure ("agent NAME removed"), and their
  // runs are updated; the agent is notified (disconnect) on commit. NotFound if no such
  // agent (or it was removed already).
  virtual absl::StatusOr<RemovedAgent> RemoveAgent(const std::string& name) = 0;
  // `fleetmark agents release NAME`: ends the quarantine of the agent (not removed) named
  // `name`; its deferred-job streak restarts and calibration nights measured before now
  // no longer count (released_at: a new baseline). NotFound if no such agent,
  // FailedPrecondition if it is not quarantined.
  virtual absl::StatusOr<ReleasedAgent> ReleaseAgent(const std::string& name) = 0;
  // Marks the agent offline if `session_id` is still its registered stream (a
  // reconnect may already have replaced it).
  virtual absl::Status SetAgentOffline(const std::string& agent_id, const std::string& session_id) = 0;
  // Records liveness of connected agents and renews the leases of their
  // assigned/running jobs to now + `lease`; also renews the leases of `renew_also`
  // (agents whose renewals the caller could not record while the database was
  // unreachable, without touching their liveness). One transaction, run even when both
  // are empty: an OK status says the database took a write just now. InvalidArgument
  // naming the field if an id is not a UUID.
  virtual absl::Status RecordLiveness(const std::vector<AgentLiveness>& batch, absl::Duration lease,
                                      const std::vector<std::string>& renew_also = {}) = 0;
  // Every agent (online state computed with options.online_window), ordered by name. An
  // agent whose enrollment token is revoked is never online (its stream is being ended).
  // Removed agents are not listed. PgStore keeps the parsed profiles it read and reads
  // again only those a registration changed since (agents.profile_version), also
  // through another coordinator.
  virtual absl::StatusOr<std::vector<AgentSummary>> ListAgentSummaries() = 0;
  // ListAgentSummaries' entry for the agent named `name` (empty, or one agent): what a
  // submit selecting one agent by name reads instead of the whole fleet. The default
  // filters ListAgentSummaries(); PgStore reads the one row.
  virtual absl::StatusOr<std::vector<AgentSummary>> ListAgentSummariesNamed(const std::string& name);
  // Agents ordered by name, state "online" | "offline" | "removed" (removed agents only
  // with `include_removed`, after the agent holding the name now).
  virtual absl::StatusOr<std::vector<v1::AgentInfo>> ListAgents(bool include_removed = false) = 0;

  // --- runs and jobs ---
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

  // --- results retention (case_results partitions, migration 0014) ---
  // Creates the monthly partitions from this month through `months_ahead` months ahead
  // (0..120) that do not exist yet (rows of such a month in the DEFAULT partition move
  // in); answers how many it created. Idempotent; safe with concurrent coordinators (a
  // transaction-level advisory lock).
  virtual absl::StatusOr<int> EnsureResultPartitions(int months_ahead) = 0;
  // Drops the partitions whose range ends at or before now - options.older_than, and
  // deletes the runs created in their ranges with their jobs (and any of their rows in
  // the DEFAULT partition), in one transaction. FailedPrecondition naming the runs, and
  // nothing changed, when one is still queued or running, or (unless options.force) has
  // results and was never exported (RecordRunExported). InvalidArgument for older_than
  // out of range. dry_run: the same answer and checks, nothing changed.
  virtual absl::StatusOr<PruneOutcome> PruneResults(const PruneOptions& options) = 0;

  // --- schedules ---
  // Schedule names are 1 to 64 characters from [A-Za-z0-9._-], as agent names
  // (InvalidArgument naming `schedule.name` otherwise).
  // AlreadyExists if the name is taken (the message says to delete it first to replace
  // it). `next_fire` is stored for display.
  virtual absl::StatusOr<v1::Schedule> CreateSchedule(const v1::Schedule& schedule, absl::Time next_fire) = 0;
  // Installs a default schedule (the coordinator's --nightly_plan) once per database,
  // remembered in seeded_defaults: if a schedule of that name exists it is updated
  // (cron, plan, selector, quick, next fire); else, if this default was seeded before
  // (and so deleted by a user since), nothing changes; else it is created. Coordinators
  // seeding at once are serialised on the seeded_defaults row: one creates, the others
  // update. InvalidArgument for a bad name or empty cron.
  enum class SeedOutcome { kCreated, kUpdated, kLeftDeleted };
  virtual absl::StatusOr<SeedOutcome> SeedDefaultSchedule(const v1::Schedule& schedule, absl::Time next_fire) = 0;
  // Ordered by name, each with its latest fire (last_fire_slot_unix_ns, last_fire_outcome:
  // "run <run id>" or why no run was created, e.g. "skipped: no online agent matches ...").
  virtual absl::StatusOr<std::vector<v1::Schedule>> ListSchedules() = 0;
  virtual absl::Status DeleteSchedule(const std::string& name) = 0;
  virtual absl::Status SetScheduleNextFire(const std::string& name, absl::Time next_fire) = 0;
  // Pauses or resumes schedule `name` (Schedule.paused). NotFound if there is none.
  virtual absl::Status SetSchedulePaused(const std::string& name, bool paused) = 0;
  // Fires `schedule_name` for `slot` exactly once across coordinators: inserts
  // (schedule, slot) into schedule_fires and creates `run` in the same transaction.
  // Returns the run, or nullopt if that slot already fired. With no agent in
  // `run.agent_ids` the slot is still recorded (it fired, matching nobody; `skipped`
  // says why and is shown as the schedule's last_fire_outcome) and the returned RunInfo
  // has an empty run_id.
  virtual absl::StatusOr<std::optional<v1::RunInfo>> FireSchedule(const std::string& schedule_name, absl::Time slot,
                                                                  const NewRun& run,
                                                                  const std::string& skipped = "") = 0;
  // The latest fired slot of a schedule, or nullopt if it never fired.
  virtual absl::StatusOr<std::optional<absl::Time>> LastFiredSlot(const std::string& schedule_name) = 0;

  // --- confirmed changes (change_records.h, migration 0012) ---
  // PgStore and MemoryStore implement them; an implementation that does not inherits
  // these defaults, which return an absl::UnimplementedError status.
  //
  // Scans up to `max_scans` (nightly run, agent) pairs not scanned yet: jobs of ended
  // runs submitted by a schedule (never confirmation runs). Each scan claims its pair
  // (change_scans) and, in the same transaction, records what `detect` finds in the
  // agent's series of the run's non-calibration cases (each series ends at that run) as
  // `suspected` changes. Returns the scans that found changes.
  virtual absl::StatusOr<std::vector<SuspectedChanges>> ScanNightlyRuns(const ChangeDetector& /*detect*/,
                                                                        int /*max_scans*/) {
    return absl::UnimplementedError("confirmed changes need the PostgreSQL store");
  }
  // For the suspected changes `found`, under the agent row's lock: when the agent is
  // removed, quarantined or offline, or already had `budget_per_day` confirmation runs
  // in the last 24 hours, marks them unconfirmed with the reason and returns it;
  // otherwise creates the run `build(plan, quick)` returns (the nightly run's stored plan
  // and quick flag), records it as their confirmation run and returns "" with the run
  // in `run`. An error of `build` marks them unconfirmed with its message.
  using ConfirmationBuilder = std::function<absl::StatusOr<NewRun>(const v1::Plan& plan, bool quick)>;
  virtual absl::StatusOr<std::string> SubmitConfirmation(const SuspectedChanges& /*found*/, int /*budget_per_day*/,
                                                         const ConfirmationBuilder& /*build*/, v1::RunInfo* /*run*/) {
    return absl::UnimplementedError("confirmed changes need the PostgreSQL store");
  }
  // Suspected changes whose confirmation run ended (done, failed or cancelled), oldest
  // first, at most `limit`.
  virtual absl::StatusOr<std::vector<EndedConfirmation>> EndedConfirmations(int /*limit*/) {
    return absl::UnimplementedError("confirmed changes need the PostgreSQL store");
  }
  // Decides change `change_id` if it is still suspected: its state, reason and the
  // confirmation median. Returns the updated change, or nullopt if it was decided
  // already (by another coordinator).
  virtual absl::StatusOr<std::optional<ChangeRecord>> DecideChange(int64_t /*change_id*/, const std::string& /*state*/,
                                                                   const std::string& /*reason*/,
                                                                   std::optional<double> /*median_ns*/) {
    return absl::UnimplementedError("confirmed changes need the PostgreSQL store");
  }
  // The changes `filter` selects, newest first. InvalidArgument naming `limit` out of
  // 1..10000.
  virtual absl::StatusOr<std::vector<ChangeRecord>> ListChanges(const ChangeFilter& /*filter*/) {
    return absl::UnimplementedError("confirmed changes need the PostgreSQL store");
  }
};

}  // namespace fleetmark::store
