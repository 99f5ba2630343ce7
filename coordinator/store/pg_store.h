// The PostgreSQL implementation of Store (store.h), over a pool of libpqxx
// connections: what Store::Open returns. Its methods are defined in store.cc (opening,
// migrations), store_tokens.cc, store_agents.cc, store_jobs.cc, store_runs.cc,
// store_schedules.cc and store_changes.cc; their contracts are Store's. Only coordinator/store/ and its
// tests include this header (it exposes libpqxx through ConnectionPool).
//
// Thread-safety: every method may be called from any thread; each call borrows one
// pooled connection for its duration (and ListAgentSummaries its cache's mutex).
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "coordinator/store/connection_pool.h"
#include "coordinator/store/run_case_ids.h"
#include "coordinator/store/store.h"

namespace fleetmark::store {

class PgStore final : public Store {
 public:
  // Opens the connection pool (checks the database is reachable). Does not migrate.
  static absl::StatusOr<std::unique_ptr<PgStore>> Open(const StoreOptions& options);
  ~PgStore() override;

  absl::Status Migrate() override;
  absl::StatusOr<std::vector<int>> AppliedMigrations() override;
  absl::StatusOr<FleetCounts> CountFleet() override;
  absl::Status CreateEnrollmentToken(const std::string& token_id, const std::string& sha256_hex,
                                     const std::string& description) override;
  absl::Status EnsureEnrollmentToken(const std::string& token_id, const std::string& sha256_hex,
                                     const std::string& description) override;
  absl::Status RevokeEnrollmentToken(const std::string& token_id) override;
  absl::StatusOr<std::string> FindEnrollmentToken(const std::string& sha256_hex) override;
  absl::StatusOr<std::vector<v1::TokenInfo>> ListEnrollmentTokens() override;
  absl::StatusOr<std::vector<Disconnect>> AgentsToDisconnect(const std::vector<std::string>& agent_ids,
                                                             const std::vector<std::string>& session_ids = {}) override;
  absl::StatusOr<AgentIdentity> FindAgentByName(const std::string& name) override;
  absl::StatusOr<std::string> RegisterAgent(const AgentRegistration& registration) override;
  absl::StatusOr<RemovedAgent> RemoveAgent(const std::string& name) override;
  absl::StatusOr<ReleasedAgent> ReleaseAgent(const std::string& name) override;
  absl::Status SetAgentOffline(const std::string& agent_id, const std::string& session_id) override;
  absl::Status RecordLiveness(const std::vector<AgentLiveness>& batch, absl::Duration lease,
                              const std::vector<std::string>& renew_also) override;
  absl::StatusOr<std::vector<AgentSummary>> ListAgentSummaries() override;
  absl::StatusOr<std::vector<AgentSummary>> ListAgentSummariesNamed(const std::string& name) override;
  absl::StatusOr<std::vector<v1::AgentInfo>> ListAgents(bool include_removed) override;
  absl::StatusOr<v1::RunInfo> CreateRun(const NewRun& run) override;
  absl::StatusOr<CreatedRun> CreateRunAndClaim(const NewRun& run, const std::vector<std::string>& idle_agent_ids,
                                               absl::Duration lease) override;
  absl::StatusOr<v1::RunInfo> GetRun(const std::string& run_id) override;
  absl::StatusOr<std::string> ResolveRunId(const std::string& id_or_prefix) override;
  absl::StatusOr<std::vector<v1::RunInfo>> ListRuns(int limit) override;
  absl::StatusOr<CancelledRun> CancelRun(const std::string& run_id) override;
  absl::StatusOr<std::vector<ClaimedJob>> ClaimJobs(const std::vector<std::string>& agent_ids,
                                                    absl::Duration lease) override;
  absl::StatusOr<bool> ResumeJob(const std::string& job_id, const std::string& agent_id, absl::Duration lease) override;
  absl::Status UpdateJobs(const std::vector<JobUpdate>& updates, absl::Duration lease) override;
  absl::Status MarkJobRunning(const std::string& job_id, const std::string& agent_id, absl::Duration lease) override;
  absl::Status UpdateJobProgress(const std::string& job_id, const std::string& agent_id, uint32_t cases_done,
                                 uint32_t cases_total, absl::Duration lease) override;
  absl::StatusOr<std::vector<absl::Status>> FinishJobs(const std::vector<JobEnd>& ends) override;
  absl::StatusOr<std::vector<std::string>> EndedJobs(const std::vector<std::string>& job_ids) override;
  absl::StatusOr<std::vector<ExpiredJob>> ExpireLeases() override;
  absl::StatusOr<std::vector<ExpiredJob>> ReleaseAgentJobs(const std::string& agent_id,
                                                           const std::string& keep_job_id) override;
  absl::StatusOr<std::vector<ResultOutcome>> InsertResults(const std::vector<AgentResult>& results) override;
  absl::StatusOr<ImportOutcome> ImportResults(const v1::ResultsDocument& document,
                                              const std::string& submitted_by) override;
  absl::StatusOr<v1::ExportResultsResponse> ExportResults(const std::string& run_id,
                                                          const std::string& agent_name) override;
  absl::StatusOr<ResultExportIndex> ListExportResults(const std::string& run_id,
                                                      const std::string& agent_name) override;
  absl::StatusOr<std::vector<v1::CaseResult>> LoadResults(const std::vector<std::string>& result_ids) override;
  absl::Status RecordRunExported(const std::string& run_id) override;
  absl::StatusOr<int> EnsureResultPartitions(int months_ahead) override;
  absl::StatusOr<PruneOutcome> PruneResults(const PruneOptions& options) override;
  absl::StatusOr<v1::Schedule> CreateSchedule(const v1::Schedule& schedule, absl::Time next_fire) override;
  absl::StatusOr<SeedOutcome> SeedDefaultSchedule(const v1::Schedule& schedule, absl::Time next_fire) override;
  absl::StatusOr<std::vector<v1::Schedule>> ListSchedules() override;
  absl::Status DeleteSchedule(const std::string& name) override;
  absl::Status SetScheduleNextFire(const std::string& name, absl::Time next_fire) override;
  absl::Status SetSchedulePaused(const std::string& name, bool paused) override;
  absl::StatusOr<std::optional<v1::RunInfo>> FireSchedule(const std::string& schedule_name, absl::Time slot,
                                                          const NewRun& run, const std::string& skipped) override;
  absl::StatusOr<std::optional<absl::Time>> LastFiredSlot(const std::string& schedule_name) override;
  absl::StatusOr<std::vector<SuspectedChanges>> ScanNightlyRuns(const ChangeDetector& detect, int max_scans) override;
  absl::StatusOr<std::string> SubmitConfirmation(const SuspectedChanges& found, int budget_per_day,
                                                 const ConfirmationBuilder& build, v1::RunInfo* run) override;
  absl::StatusOr<std::vector<EndedConfirmation>> EndedConfirmations(int limit) override;
  absl::StatusOr<std::optional<ChangeRecord>> DecideChange(int64_t change_id, const std::string& state,
                                                           const std::string& reason,
                                                           std::optional<double> median_ns) override;
  absl::StatusOr<std::vector<ChangeRecord>> ListChanges(const ChangeFilter& filter) override;

  ConnectionPool& pool() { return *pool_; }
  const StoreOptions& options() const { return options_; }

 private:
  PgStore(StoreOptions options, std::unique_ptr<ConnectionPool> pool);
  // ListAgentSummaries, or (`name` not null) its entry for that name.
  absl::StatusOr<std::vector<AgentSummary>> ListSummaries(const std::string* name);
  StoreOptions options_;
  std::unique_ptr<ConnectionPool> pool_;
  // ListAgentSummaries' parsed profiles: agent id -> (profile_version, profile), the
  // agents of its last listing.
  struct CachedProfile {
    int64_t version = 0;
    std::shared_ptr<const AgentProfile> profile;
  };
  // InsertResults: each run's case ids, and until when (unix ns) ids are looked up
  // before a COPY because a replay was seen (kLookupAfterReplay after the last one).
  static constexpr absl::Duration kLookupAfterReplay = absl::Seconds(60);
  RunCaseIds run_case_ids_;
  std::atomic<int64_t> lookup_until_unix_ns_{0};
  absl::Mutex profiles_mu_;
  absl::flat_hash_map<std::string, CachedProfile> profiles_ ABSL_GUARDED_BY(profiles_mu_);
};

}  // namespace fleetmark::store
