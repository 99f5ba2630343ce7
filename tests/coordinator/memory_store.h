// An in-memory Store (coordinator/store/store.h) for unit tests of the services that
// need no PostgreSQL. It holds queued jobs per agent and claims them as the real store
// does (one active job per agent, oldest queued first, attempt + 1); every call is
// recorded. The methods the tests here do not exercise return Unimplemented naming the
// method, so a test that starts relying on one fails loudly instead of passing on a
// made-up answer. Thread-safe.
#pragma once

#include <deque>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "coordinator/store/store.h"

namespace fleetmark::store {

class MemoryStore final : public Store {
 public:
  // Queues a job of `run_id` for `agent_id`.
  void QueueJob(const std::string& agent_id, const std::string& job_id, const std::string& run_id = "run-1") {
    absl::MutexLock lock(&mu_);
    queued_[agent_id].push_back({job_id, run_id, 0});
  }
  // Makes ClaimJobs fail with `status` (OK: succeed again).
  void FailClaims(absl::Status status) {
    absl::MutexLock lock(&mu_);
    claim_failure_ = std::move(status);
  }
  // The agent ids of each ClaimJobs call, in call order.
  std::vector<std::vector<std::string>> claim_calls() const {
    absl::MutexLock lock(&mu_);
    return claim_calls_;
  }
  // The job each agent holds (assigned), "" = none.
  std::string active_job(const std::string& agent_id) const {
    absl::MutexLock lock(&mu_);
    auto it = active_.find(agent_id);
    return it == active_.end() ? "" : it->second;
  }

  absl::StatusOr<std::vector<ClaimedJob>> ClaimJobs(const std::vector<std::string>& agent_ids,
                                                    absl::Duration lease) override {
    absl::MutexLock lock(&mu_);
    claim_calls_.push_back(agent_ids);
    if (!claim_failure_.ok()) return claim_failure_;
    std::vector<ClaimedJob> claimed;
    for (const std::string& agent : agent_ids) {
      if (!active_[agent].empty()) continue;  // one active job per agent
      std::deque<Job>& queue = queued_[agent];
      if (queue.empty()) continue;
      Job job = queue.front();
      queue.pop_front();
      active_[agent] = job.job_id;
      ClaimedJob c;
      c.agent_id = agent;
      c.assignment.set_job_id(job.job_id);
      c.assignment.set_run_id(job.run_id);
      c.assignment.set_attempt(job.attempts + 1);
      claimed.push_back(std::move(c));
    }
    return claimed;
  }

  absl::Status Migrate() override { return Unused("Migrate"); }
  absl::StatusOr<std::vector<int>> AppliedMigrations() override { return Unused("AppliedMigrations"); }
  absl::StatusOr<FleetCounts> CountFleet() override { return Unused("CountFleet"); }
  absl::Status CreateEnrollmentToken(const std::string& /*token_id*/, const std::string& /*sha256_hex*/,
                                     const std::string& /*description*/) override {
    return Unused("CreateEnrollmentToken");
  }
  absl::Status EnsureEnrollmentToken(const std::string& /*token_id*/, const std::string& /*sha256_hex*/,
                                     const std::string& /*description*/) override {
    return Unused("EnsureEnrollmentToken");
  }
  absl::Status RevokeEnrollmentToken(const std::string& /*token_id*/) override {
    return Unused("RevokeEnrollmentToken");
  }
  absl::StatusOr<std::string> FindEnrollmentToken(const std::string& /*sha256_hex*/) override {
    return Unused("FindEnrollmentToken");
  }
  absl::StatusOr<std::vector<v1::TokenInfo>> ListEnrollmentTokens() override { return Unused("ListEnrollmentTokens"); }
  absl::StatusOr<std::vector<Disconnect>> AgentsToDisconnect(const std::vector<std::string>& /*agent_ids*/,
                                                             const std::vector<std::string>& /*session_ids*/) override {
    return Unused("AgentsToDisconnect");
  }
  absl::StatusOr<AgentIdentity> FindAgentByName(const std::string& /*name*/) override {
    return Unused("FindAgentByName");
  }
  absl::StatusOr<std::string> RegisterAgent(const AgentRegistration& /*registration*/) override {
    return Unused("RegisterAgent");
  }
  absl::StatusOr<RemovedAgent> RemoveAgent(const std::string& /*name*/) override { return Unused("RemoveAgent"); }
  absl::StatusOr<ReleasedAgent> ReleaseAgent(const std::string& /*name*/) override { return Unused("ReleaseAgent"); }
  absl::Status SetAgentOffline(const std::string& /*agent_id*/, const std::string& /*session_id*/) override {
    return Unused("SetAgentOffline");
  }
  absl::Status RecordLiveness(const std::vector<AgentLiveness>& /*batch*/, absl::Duration /*lease*/,
                              const std::vector<std::string>& /*renew_also*/) override {
    return Unused("RecordLiveness");
  }
  absl::StatusOr<std::vector<AgentSummary>> ListAgentSummaries() override { return Unused("ListAgentSummaries"); }
  absl::StatusOr<std::vector<v1::AgentInfo>> ListAgents(bool /*include_removed*/) override {
    return Unused("ListAgents");
  }
  absl::StatusOr<v1::RunInfo> CreateRun(const NewRun& /*run*/) override { return Unused("CreateRun"); }
  absl::StatusOr<CreatedRun> CreateRunAndClaim(const NewRun& /*run*/,
                                               const std::vector<std::string>& /*idle_agent_ids*/,
                                               absl::Duration /*lease*/) override {
    return Unused("CreateRunAndClaim");
  }
  absl::StatusOr<v1::RunInfo> GetRun(const std::string& /*run_id*/) override { return Unused("GetRun"); }
  absl::StatusOr<std::string> ResolveRunId(const std::string& /*id_or_prefix*/) override {
    return Unused("ResolveRunId");
  }
  absl::StatusOr<std::vector<v1::RunInfo>> ListRuns(int /*limit*/) override { return Unused("ListRuns"); }
  absl::StatusOr<CancelledRun> CancelRun(const std::string& /*run_id*/) override { return Unused("CancelRun"); }
  absl::StatusOr<bool> ResumeJob(const std::string& /*job_id*/, const std::string& /*agent_id*/,
                                 absl::Duration /*lease*/) override {
    return Unused("ResumeJob");
  }
  absl::Status UpdateJobs(const std::vector<JobUpdate>& /*updates*/, absl::Duration /*lease*/) override {
    return Unused("UpdateJobs");
  }
  absl::Status MarkJobRunning(const std::string& /*job_id*/, const std::string& /*agent_id*/,
                              absl::Duration /*lease*/) override {
    return Unused("MarkJobRunning");
  }
  absl::Status UpdateJobProgress(const std::string& /*job_id*/, const std::string& /*agent_id*/,
                                 uint32_t /*cases_done*/, uint32_t /*cases_total*/, absl::Duration /*lease*/) override {
    return Unused("UpdateJobProgress");
  }
  absl::StatusOr<std::vector<absl::Status>> FinishJobs(const std::vector<JobEnd>& /*ends*/) override {
    return Unused("FinishJobs");
  }
  absl::StatusOr<std::vector<std::string>> EndedJobs(const std::vector<std::string>& /*job_ids*/) override {
    return Unused("EndedJobs");
  }
  absl::StatusOr<std::vector<ExpiredJob>> ExpireLeases() override { return Unused("ExpireLeases"); }
  absl::StatusOr<std::vector<ExpiredJob>> ReleaseAgentJobs(const std::string& /*agent_id*/,
                                                           const std::string& /*keep_job_id*/) override {
    return Unused("ReleaseAgentJobs");
  }
  absl::StatusOr<std::vector<ResultOutcome>> InsertResults(const std::vector<AgentResult>& /*results*/) override {
    return Unused("InsertResults");
  }
  absl::StatusOr<v1::ExportResultsResponse> ExportResults(const std::string& /*run_id*/,
                                                          const std::string& /*agent_name*/) override {
    return Unused("ExportResults");
  }
  absl::StatusOr<ResultExportIndex> ListExportResults(const std::string& /*run_id*/,
                                                      const std::string& /*agent_name*/) override {
    return Unused("ListExportResults");
  }
  absl::Status RecordRunExported(const std::string& /*run_id*/) override { return Unused("RecordRunExported"); }
  absl::StatusOr<int> EnsureResultPartitions(int /*months_ahead*/) override { return Unused("EnsureResultPartitions"); }
  absl::StatusOr<PruneOutcome> PruneResults(const PruneOptions& /*options*/) override { return Unused("PruneResults"); }
  absl::StatusOr<std::vector<v1::CaseResult>> LoadResults(const std::vector<std::string>& /*result_ids*/) override {
    return Unused("LoadResults");
  }
  absl::StatusOr<v1::Schedule> CreateSchedule(const v1::Schedule& /*schedule*/, absl::Time /*next_fire*/) override {
    return Unused("CreateSchedule");
  }
  absl::StatusOr<SeedOutcome> SeedDefaultSchedule(const v1::Schedule& /*schedule*/, absl::Time /*next_fire*/) override {
    return Unused("SeedDefaultSchedule");
  }
  absl::StatusOr<std::vector<v1::Schedule>> ListSchedules() override { return Unused("ListSchedules"); }
  absl::Status DeleteSchedule(const std::string& /*name*/) override { return Unused("DeleteSchedule"); }
  absl::Status SetScheduleNextFire(const std::string& /*name*/, absl::Time /*next_fire*/) override {
    return Unused("SetScheduleNextFire");
  }
  absl::Status SetSchedulePaused(const std::string& /*name*/, bool /*paused*/) override {
    return Unused("SetSchedulePaused");
  }
  absl::StatusOr<std::optional<v1::RunInfo>> FireSchedule(const std::string& /*schedule_name*/, absl::Time /*slot*/,
                                                          const NewRun& /*run*/,
                                                          const std::string& /*skipped*/) override {
    return Unused("FireSchedule");
  }
  absl::StatusOr<std::optional<absl::Time>> LastFiredSlot(const std::string& /*schedule_name*/) override {
    return Unused("LastFiredSlot");
  }

 private:
  struct Job {
    std::string job_id, run_id;
    uint32_t attempts;
  };
  static absl::Status Unused(const char* method) {
    return absl::UnimplementedError(absl::StrCat("MemoryStore::", method, " is not implemented"));
  }
  mutable absl::Mutex mu_;
  std::map<std::string, std::deque<Job>> queued_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::string> active_ ABSL_GUARDED_BY(mu_);
  std::vector<std::vector<std::string>> claim_calls_ ABSL_GUARDED_BY(mu_);
  absl::Status claim_failure_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fleetmark::store
