// MemoryStore's rows (memory_store.h) and the transaction every method runs in: the
// tables PgStore's migrations define, as maps, and the helpers the methods share
// (run status, the run read model, lease expiry, agent health). Internal to
// coordinator/store/memory_*.cc.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "coordinator/store/memory_store.h"
#include "coordinator/store/store.h"

namespace fleetmark::store::memory {

struct Token {
  std::string token_id, sha256, description;
  absl::Time created_at;
  int64_t seq = 0;
  std::optional<absl::Time> revoked_at;
};

struct Agent {
  std::string agent_id, name, credential_sha256, token_id;  // token_id "" = none
  v1::HostInfo host;
  std::string host_bytes;  // host serialized: a snapshot is recorded when it changes
  std::map<std::string, std::string> labels;
  std::string engine_version;
  std::string state = "online";
  std::string coordinator_id, session_id, session_instance;
  absl::Time last_seen;
  uint64_t rss_bytes = 0;
  double cpu_seconds = 0;
  std::string machine_id, boot_id;
  bool exclusive_cpus = false;
  int64_t profile_version = 0;
  std::shared_ptr<const AgentProfile> profile;  // of profile_version
  std::optional<absl::Time> removed_at;
  std::string health = kHealthOk, quarantine_reason;
  std::optional<absl::Time> quarantined_at, released_at;
  int64_t released_seq = 0;  // the call that released it (runs of its time after it count)
  int deferred_in_a_row = 0;
  std::optional<double> noise_percent;
  int noise_nights = 0;
  bool imported = false;  // a device record of `results import` (migration 0020)
  int64_t seq = 0;
};

struct Run {
  std::string run_id;
  v1::Plan plan;
  std::string selector, filter, submitted_by;
  bool quick = false;
  bool imported = false;                             // stored by `results import`
  std::optional<std::vector<std::string>> case_ids;  // nullopt: not recorded
  std::string status = kJobQueued;
  absl::Time created_at;
  int64_t seq = 0;  // the call that created it (orders rows of one time)
  std::optional<absl::Time> finished_at, exported_at;
};

struct Job {
  std::string job_id, run_id, agent_id;
  std::string status = kJobQueued;
  std::string failure_kind, message, coordinator_id;
  uint32_t attempts = 0, max_attempts = 3, cases_done = 0, cases_total = 0;
  std::optional<absl::Time> lease_expires_at, expires_at, finished_at;
  absl::Time created_at;
  int64_t seq = 0;
};

struct Result {
  std::string result_id, run_id, job_id, agent_id, case_id, status, strategy_label;
  std::optional<std::string> fingerprint_hash;
  double median_ns = 0;
  std::optional<absl::Time> finished_at;  // from finished_unix_ns (0: none)
  absl::Time received_at;
  int64_t seq = 0;
  bool emulated = false;
  std::string bytes;  // the serialized CaseResult as stored
  absl::Time run_created_at;
};

struct Schedule {
  std::string schedule_id;
  v1::Schedule schedule;  // name, cron, plan, selector, quick, filter, paused, created, next fire
};
struct Fire {
  std::optional<std::string> run_id;
  std::string note, coordinator_id;
};

struct Change {
  ChangeRecord record;  // agent_name filled when read
};

struct Tables {
  std::map<std::string, Token> tokens;                      // by token_id
  std::map<std::string, Agent> agents;                      // by agent_id
  std::map<std::string, Run> runs;                          // by run_id
  std::map<std::string, Job> jobs;                          // by job_id
  std::map<std::string, Result> results;                    // by result_id
  std::map<std::string, Schedule> schedules;                // by name
  std::map<std::string, std::map<absl::Time, Fire>> fires;  // by schedule_id, slot
  std::set<std::string> seeded_defaults;
  std::vector<std::string> host_snapshots;                     // agent ids, one per snapshot
  std::map<int64_t, Change> changes;                           // by change_id
  std::set<std::pair<std::string, std::string>> change_scans;  // (run, agent)
  std::set<int64_t> partitions;                                // months (year * 12 + month - 1) with a partition
  int64_t next_change_id = 1;
  int64_t seq = 0;
};

}  // namespace fleetmark::store::memory

namespace fleetmark::store {

// One Store call on a MemoryDatabase: holds its mutex from construction to destruction,
// then delivers the notifications sent meanwhile (unless Abort()ed: an error returned
// by the call; the tables must then be unchanged, or the call write nothing first).
class MemoryTransaction {
 public:
  explicit MemoryTransaction(MemoryDatabase& db);
  ~MemoryTransaction();
  MemoryTransaction(const MemoryTransaction&) = delete;
  MemoryTransaction& operator=(const MemoryTransaction&) = delete;

  memory::Tables& tables() ABSL_NO_THREAD_SAFETY_ANALYSIS { return *db_.tables_; }
  // The transaction's time (PostgreSQL's now(): one value per transaction, µs).
  absl::Time now() const { return now_; }
  int64_t seq() const { return seq_; }
  std::string NewId() ABSL_NO_THREAD_SAFETY_ANALYSIS;
  // Sent after the call, unless it names no agent.
  void Notify(Notification n);
  void Abort() { pending_.clear(); }

 private:
  MemoryDatabase& db_;
  absl::Time now_;
  int64_t seq_ = 0;
  std::vector<Notification> pending_;
};

namespace memory {

// The helpers of several memory_*.cc files; `txn` is the caller's.
// Recomputes the run's status from its jobs (fm_refresh_run: kept once cancelled).
void RefreshRun(MemoryTransaction& txn, const std::string& run_id);
// GetRun's read model: the run, its jobs (by agent name, then creation) and the count
// of its cases with a real result; nullopt if unknown.
std::optional<v1::RunInfo> LoadRun(MemoryTransaction& txn, const std::string& run_id);
// Inserts the plan's run and one job per agent (assigned for `assign_to`, claimed by
// `coordinator_id` with `lease`), announces the queued ones; (job, agent) assigned.
struct InsertedRun {
  std::string run_id;
  std::vector<std::pair<std::string, std::string>> assigned;
};
InsertedRun InsertRun(MemoryTransaction& txn, const NewRun& run, const std::vector<std::string>& assign_to,
                      absl::Duration lease, const std::string& coordinator_id);
// Of `agent_ids`, those free to start a job under the one-job-per-host rule
// (store_hosts.h AgentsFreeToStart).
std::vector<std::string> AgentsFreeToStart(MemoryTransaction& txn, const std::vector<std::string>& agent_ids,
                                           bool only_with_queued_job);
// `id` in lower case (PostgreSQL's uuid type reads any case).
std::string Lower(const std::string& id);
// FailedPrecondition naming the first agent of `run` that does not exist (what
// PostgreSQL's jobs trigger of migration 0016 answers; the caller writes nothing).
absl::Status CheckRunAgents(MemoryTransaction& txn, const NewRun& run);
// Whether the agent is online as ListAgentSummaries counts it.
bool Online(const Agent& agent, absl::Time now, absl::Duration window);
// The distinct case ids of the job's stored results, optionally not counting
// cancelled placeholders.
std::set<std::string> StoredCases(MemoryTransaction& txn, const Job& job, bool count_cancelled);
// RunInfo.results: the run's (job, case) pairs with a newest attempt not cancelled.
uint64_t ResultCount(MemoryTransaction& txn, const std::string& run_id);
// The newest attempt first (Store::ExportResults' order).
bool NewerAttempt(const Result& a, const Result& b);
// After the jobs `ended` (job, outcome) ended: the agents' health (store_health.h).
struct EndedJob {
  std::string job_id, agent_id, run_id;
  const JobOutcome* outcome = nullptr;
};
void UpdateAgentsHealth(MemoryTransaction& txn, const std::vector<EndedJob>& ended, const HealthOptions& options);
// Stores `r` as result `id` (lower case) of `job` (its run and agent), measured under
// emulation or not, received now.
void PutResult(MemoryTransaction& txn, const std::string& id, const v1::CaseResult& r, const Job& job, bool emulated);
// UTC month index (year * 12 + month - 1) of `t`, and its first instant.
int64_t MonthOf(absl::Time t);
absl::Time MonthStart(int64_t month);

}  // namespace memory
}  // namespace fleetmark::store
