// An in-memory Store (store.h): what the coordinator's services run on in tests without
// PostgreSQL, with PgStore's semantics (store.h's contracts; one conformance suite,
// tests/coordinator/store_conformance_test.cc, runs against both).
//
//   FakeClock clock(absl::FromUnixSeconds(1'700'000'000));
//   auto db = std::make_shared<MemoryDatabase>(clock);
//   MemoryStore c1(StoreOptions{.coordinator_id = "c1"}, db);  // two coordinators
//   MemoryStore c2(StoreOptions{.coordinator_id = "c2"}, db);  // on one "database"
//   db->Subscribe([](const Notification& n) { ... });          // what PgStore NOTIFYs
//
// A MemoryDatabase is the database: its rows, its clock (leases, last_seen, created
// times: "database time", as PgStore uses PostgreSQL's now()), and the in-process
// subscriber that gets each notification a PgStore would NOTIFY, after the change is
// done (on "commit"), outside the lock. Several MemoryStores on one database are
// several coordinators (each with its StoreOptions); a store opened again on it is a
// restarted coordinator.
//
// Thread-safety: every method of both classes may be called from any thread. Each
// Store method runs under the database's one absl::Mutex from its first read to its
// last write, so it is atomic and serialised with every other (what PgStore's
// transactions and row locks give; claims never "skip" a locked row since no row is
// ever held between calls). The subscriber runs on the calling thread after the
// mutex is released, so it may call the store; AgentRegistration::session_ended_here
// runs under the mutex (as PgStore calls it inside its transaction) and must not.
//
// Differences from PgStore, accepted:
// - There is no schema: Migrate() only makes what migration 0014 makes (the result
//   partitions of this month and the next), AppliedMigrations() answers
//   EmbeddedMigrationVersions(); DatabaseErrorCount() never moves (no database errors).
// - Result partitions (EnsureResultPartitions, PruneResults) are emulated: the store
//   remembers which UTC months have a "partition"; results of a month without one are
//   in the "DEFAULT partition" (pruned only with a run of a created month, as in
//   PostgreSQL). ResultPartition::name is PostgreSQL's ("case_results_yYYYYmMM"),
//   estimated_rows the exact number of results of the month.
// - Nothing is unavailable: no method returns Unavailable or Aborted.
// - Times have PostgreSQL's precision (microseconds); rows created by one call share
//   one time, and of rows created at one time the later call's sort after (PostgreSQL's
//   now() moves between transactions even when a FakeClock does not).
// - Ids are random version-4 UUIDs unless MemoryDatabase::SetIdSource says otherwise.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "coordinator/store/notification.h"
#include "coordinator/store/store.h"
#include "engine/common/clock.h"

namespace fleetmark::store {

namespace memory {
struct Tables;  // memory_tables.h
}  // namespace memory

// The rows every MemoryStore on it shares, and the database's clock.
class MemoryDatabase {
 public:
  // `clock` (not owned) must outlive the database.
  explicit MemoryDatabase(const Clock& clock = SystemClock());
  ~MemoryDatabase();
  MemoryDatabase(const MemoryDatabase&) = delete;
  MemoryDatabase& operator=(const MemoryDatabase&) = delete;

  // Replaces the subscriber (null: none) that gets every notification after the change
  // that sends it is done, in the order they were sent.
  void Subscribe(std::function<void(const Notification&)> subscriber);
  // Adds a subscriber beside the one Subscribe sets (a coordinator of this process
  // listening, as PgStore's LISTEN does; several may listen to one database); each gets
  // every later notification, same order and rules as Subscribe's. Returns the key
  // RemoveSubscriber takes.
  int AddSubscriber(std::function<void(const Notification&)> subscriber);
  // Removes the subscriber of `key` (an unknown key: nothing). When it returns, no
  // delivery to it is running or will start. Must not be called from a subscriber.
  void RemoveSubscriber(int key);
  // Replaces where new ids come from (null: random version-4 UUIDs); must return
  // lower-case UUIDs never used before. CreateRun draws the run's id first.
  void SetIdSource(std::function<std::string()> next_id);

  const Clock& clock() const { return clock_; }
  // A random version-4 UUID (lower case): the default id source. Thread-safe.
  static std::string RandomId();

 private:
  friend class MemoryStore;
  friend class MemoryTransaction;
  const Clock& clock_;
  absl::Mutex mu_;
  std::unique_ptr<memory::Tables> tables_ ABSL_GUARDED_BY(mu_);
  std::function<void(const Notification&)> subscriber_ ABSL_GUARDED_BY(mu_);
  std::map<int, std::function<void(const Notification&)>> added_subscribers_ ABSL_GUARDED_BY(mu_);
  int next_subscriber_key_ ABSL_GUARDED_BY(mu_) = 0;
  std::function<std::string()> next_id_ ABSL_GUARDED_BY(mu_);
  // Serialises deliveries, so notifications arrive in the order they were sent.
  absl::Mutex deliver_mu_;
};

// Not final: a test may override a method to record or fail its calls (calling this
// class's method for the behaviour).
class MemoryStore : public Store {
 public:
  // A coordinator with `options` on `database` (never null).
  MemoryStore(StoreOptions options, std::shared_ptr<MemoryDatabase> database);
  // A coordinator alone on a new database whose time is `clock` (not owned).
  explicit MemoryStore(StoreOptions options = {}, const Clock& clock = SystemClock());
  ~MemoryStore() override;

  const std::shared_ptr<MemoryDatabase>& database() const { return db_; }

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

 private:
  StoreOptions options_;
  std::shared_ptr<MemoryDatabase> db_;
};

}  // namespace fleetmark::store
