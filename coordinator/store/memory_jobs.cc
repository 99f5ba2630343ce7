// MemoryStore: runs, jobs (claims, leases, progress, ends) and case results, with
// PgStore's semantics (store_jobs.cc, store_runs.cc, store_statements.cc).
#include <algorithm>
#include <climits>
#include <map>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "coordinator/store/memory_tables.h"
#include "coordinator/store/result_rows.h"
#include "coordinator/store/store_internal.h"
#include "coordinator/store/store_runs.h"
#include "engine/common/status_macros.h"
#include "engine/common/text.h"
#include "engine/topology/fingerprint.h"

namespace fleetmark::store {

using memory::Agent;
using memory::CheckRunAgents;
using memory::Job;
using memory::Lower;
using memory::Result;
using memory::Run;

namespace {

bool Live(const Job& job) { return job.status == kJobAssigned || job.status == kJobRunning; }

bool HasActiveJob(MemoryTransaction& txn, const std::string& agent_id) {
  for (const auto& [id, job] : txn.tables().jobs) {
    if (job.agent_id == agent_id && Live(job)) return true;
  }
  return false;
}

// The agent's oldest queued job (created_at, then the creating call, then job id).
Job* OldestQueued(MemoryTransaction& txn, const std::string& agent_id) {
  Job* oldest = nullptr;
  for (auto& [id, job] : txn.tables().jobs) {
    if (job.agent_id != agent_id || job.status != kJobQueued) continue;
    if (oldest == nullptr ||
        std::tie(job.created_at, job.seq, job.job_id) < std::tie(oldest->created_at, oldest->seq, oldest->job_id)) {
      oldest = &job;
    }
  }
  return oldest;
}

std::string UtcSeconds(absl::Time t) { return absl::FormatTime("%Y-%m-%d %H:%M:%S", t, absl::UTCTimeZone()); }

// fm_expire_jobs and (sweep only) fm_expire_queued, then the runs and notifications.
std::vector<ExpiredJob> ExpireInTxn(MemoryTransaction& txn, bool release, const std::string& agent_id,
                                    const std::string& keep_job_id, absl::Duration requeue_timeout) {
  auto& t = txn.tables();
  std::vector<ExpiredJob> expired;
  std::set<std::string> runs;
  Notification requeued{.kind = NotificationKind::kQueued}, ended{.kind = NotificationKind::kEnded};
  auto report = [&](const Job& job) {
    ExpiredJob& e = expired.emplace_back();
    e.job_id = job.job_id;
    e.run_id = job.run_id;
    e.agent_id = job.agent_id;
    e.failed = job.status == kJobFailed;
    e.done = job.status == kJobDone;
    e.attempts = job.attempts;
    runs.insert(job.run_id);
    if (e.failed || e.done) {
      ended.agent_ids.push_back(job.agent_id);
      ended.job_ids.push_back(job.job_id);
    } else {
      requeued.agent_ids.push_back(job.agent_id);
    }
  };
  for (auto& [id, job] : t.jobs) {
    if (!Live(job)) continue;
    const bool selected = release ? job.agent_id == agent_id && job.job_id != keep_job_id
                                  : job.lease_expires_at.has_value() && *job.lease_expires_at < txn.now();
    if (!selected) continue;
    const Run& run = t.runs.at(job.run_id);
    const std::string& name = t.agents.at(job.agent_id).name;
    const char* how = release ? " restarted" : " lost (lease expired)";
    const bool every_case = run.case_ids && !run.case_ids->empty() &&
                            run.case_ids->size() <= memory::StoredCases(txn, job, /*count_cancelled=*/false).size();
    if (every_case) {
      job.status = kJobDone;
      job.failure_kind = "";
      job.message = absl::StrCat("every case stored; agent ", name, how, " before its report came, after attempt ",
                                 job.attempts, " of ", job.max_attempts);
      job.finished_at = txn.now();
      job.cases_done = std::max(job.cases_done, job.cases_total);
    } else if (job.attempts >= job.max_attempts) {
      job.status = kJobFailed;
      job.failure_kind = "infrastructure";
      job.message = absl::StrCat("infrastructure: agent ", name, how, " after ", job.attempts, " of ", job.max_attempts,
                                 " attempts");
      job.finished_at = txn.now();
    } else {
      job.status = kJobQueued;
      job.failure_kind = "";
      job.message = absl::StrCat("infrastructure: agent ", name, how, ", re-queued after attempt ", job.attempts,
                                 " of ", job.max_attempts);
      // A later expiry of submit --queue_offline stands.
      job.expires_at = std::max(job.expires_at.value_or(absl::InfinitePast()), txn.now() + requeue_timeout);
      job.finished_at.reset();
    }
    job.lease_expires_at.reset();
    report(job);
  }
  if (!release) {
    for (auto& [id, job] : t.jobs) {
      if (job.status != kJobQueued || !job.expires_at || !(*job.expires_at < txn.now())) continue;
      job.status = kJobFailed;
      job.failure_kind = "infrastructure";
      job.message = job.attempts > 0 ? absl::StrCat(job.message, "; not taken back by ", UtcSeconds(*job.expires_at),
                                                    " UTC (coordinator --requeue_timeout)")
                                     : absl::StrCat("infrastructure: expired: agent ", t.agents.at(job.agent_id).name,
                                                    " did not take the job by ", UtcSeconds(*job.expires_at),
                                                    " UTC (submit --queue_offline)");
      job.finished_at = txn.now();
      report(job);
    }
  }
  for (const std::string& run_id : runs) memory::RefreshRun(txn, run_id);
  txn.Notify(std::move(requeued));
  txn.Notify(std::move(ended));
  return expired;
}

// ListExportResults in `txn` (store_jobs.cc ExportIndexInTxn).
absl::StatusOr<ResultExportIndex> ExportIndexInTxn(MemoryTransaction& txn, const std::string& run_id,
                                                   const std::string& agent_name) {
  std::optional<v1::RunInfo> run = memory::LoadRun(txn, run_id);
  if (!run) return absl::NotFoundError(absl::StrCat("run ", run_id, " not found"));
  auto& t = txn.tables();
  ResultExportIndex index;
  index.run = *std::move(run);
  for (const auto& [id, job] : t.jobs) {
    if (job.run_id != run_id) continue;
    const Agent& agent = t.agents.at(job.agent_id);
    if (agent_name.empty() || agent.name == agent_name) index.hosts[agent.name] = agent.host;
  }
  if (index.hosts.empty() && !agent_name.empty()) {
    return absl::NotFoundError(absl::StrCat("agent \"", agent_name, "\" has no job in run ", run_id));
  }
  std::map<std::pair<std::string, std::string>, const Result*> newest;  // (job, case)
  for (const auto& [id, r] : t.results) {
    if (r.run_id != run_id || (!agent_name.empty() && t.agents.at(r.agent_id).name != agent_name)) continue;
    const Result*& kept = newest[{r.job_id, r.case_id}];
    if (kept == nullptr || memory::NewerAttempt(r, *kept)) kept = &r;
  }
  std::vector<const Result*> rows;
  for (const auto& [key, r] : newest) rows.push_back(r);
  auto name_of = [&](const Result* r) -> const std::string& { return t.agents.at(r->agent_id).name; };
  std::sort(rows.begin(), rows.end(), [&](const Result* a, const Result* b) {
    return std::tie(name_of(a), a->case_id, a->result_id) < std::tie(name_of(b), b->case_id, b->result_id);
  });
  // By agent, then case id in natural order (a sweep's cpu_ns=20000 before cpu_ns=100000).
  std::stable_sort(rows.begin(), rows.end(), [&](const Result* a, const Result* b) {
    if (name_of(a) != name_of(b)) return name_of(a) < name_of(b);
    return NaturalLess(a->case_id, b->case_id);
  });
  for (const Result* r : rows) index.results.push_back({r->result_id, r->bytes.size()});
  return index;
}

absl::StatusOr<std::vector<v1::CaseResult>> LoadResultsInTxn(MemoryTransaction& txn,
                                                             const std::vector<std::string>& result_ids) {
  std::vector<v1::CaseResult> results(result_ids.size());
  for (size_t i = 0; i < result_ids.size(); ++i) {
    const std::string id = Lower(result_ids[i]);
    auto it = txn.tables().results.find(id);
    if (it == txn.tables().results.end()) return absl::NotFoundError(absl::StrCat("result ", id, " not found"));
    results[i].ParseFromString(it->second.bytes);
    // Measured under emulation is the coordinator's record, not the agent's claim.
    results[i].set_emulated(it->second.emulated);
  }
  return results;
}

}  // namespace

namespace memory {

InsertedRun InsertRun(MemoryTransaction& txn, const NewRun& new_run, const std::vector<std::string>& assign_to,
                      absl::Duration lease, const std::string& coordinator_id) {
  auto& t = txn.tables();
  InsertedRun inserted;
  inserted.run_id = txn.NewId();
  Run& run = t.runs[inserted.run_id];
  run.run_id = inserted.run_id;
  run.plan = new_run.plan;
  run.selector = new_run.selector;
  run.filter = new_run.filter;
  run.submitted_by = new_run.submitted_by;
  run.quick = new_run.quick;
  if (!new_run.case_ids.empty()) run.case_ids = new_run.case_ids;
  run.created_at = txn.now();
  run.seq = txn.seq();
  const std::set<std::string> idle(assign_to.begin(), assign_to.end());
  std::set<std::string> busy;  // agents with an assigned/running job before this run
  for (const auto& [id, job] : t.jobs) {
    if (Live(job)) busy.insert(job.agent_id);
  }
  Notification queued{.kind = NotificationKind::kQueued};
  for (const std::string& given : new_run.agent_ids) {
    const std::string agent_id = Lower(given);
    Job job;
    job.job_id = txn.NewId();
    job.run_id = run.run_id;
    job.agent_id = agent_id;
    job.max_attempts = new_run.max_attempts;
    job.cases_total = new_run.cases_total;
    job.created_at = txn.now();
    job.seq = txn.seq();
    if (new_run.queue_expiry > absl::ZeroDuration()) job.expires_at = txn.now() + new_run.queue_expiry;
    if (idle.count(agent_id) > 0 && busy.count(agent_id) == 0) {
      job.status = kJobAssigned;
      job.attempts = 1;
      job.lease_expires_at = txn.now() + lease;
      job.coordinator_id = coordinator_id;
      inserted.assigned.emplace_back(job.job_id, agent_id);
    } else {
      queued.agent_ids.push_back(agent_id);
    }
    t.jobs[job.job_id] = std::move(job);
  }
  if (!inserted.assigned.empty()) run.status = "running";
  txn.Notify(std::move(queued));
  return inserted;
}

}  // namespace memory

absl::StatusOr<v1::RunInfo> MemoryStore::CreateRun(const NewRun& run) {
  FLEETMARK_RETURN_IF_ERROR(internal::ValidateNewRun(run));
  MemoryTransaction txn(*db_);
  FLEETMARK_RETURN_IF_ERROR(CheckRunAgents(txn, run));
  const memory::InsertedRun inserted = memory::InsertRun(txn, run, {}, absl::ZeroDuration(), "");
  return *memory::LoadRun(txn, inserted.run_id);
}

absl::StatusOr<Store::CreatedRun> MemoryStore::CreateRunAndClaim(const NewRun& run,
                                                                 const std::vector<std::string>& idle_agent_ids,
                                                                 absl::Duration lease) {
  FLEETMARK_RETURN_IF_ERROR(internal::ValidateNewRun(run));
  for (const std::string& id : idle_agent_ids) FLEETMARK_RETURN_IF_ERROR(internal::CheckUuid("agent_id", id));
  std::set<std::string> in_run;
  for (const std::string& id : run.agent_ids) in_run.insert(Lower(id));
  std::vector<std::string> idle_in_run;
  for (const std::string& id : idle_agent_ids) {
    if (in_run.count(Lower(id)) > 0) idle_in_run.push_back(Lower(id));
  }
  MemoryTransaction txn(*db_);
  FLEETMARK_RETURN_IF_ERROR(CheckRunAgents(txn, run));
  const std::vector<std::string> assign_to = memory::AgentsFreeToStart(txn, idle_in_run, false);
  const memory::InsertedRun inserted = memory::InsertRun(txn, run, assign_to, lease, options_.coordinator_id);
  CreatedRun created;
  created.run_id = inserted.run_id;
  created.run = *memory::LoadRun(txn, inserted.run_id);
  created.claimed = internal::ClaimedJobsOfNewRun(created.run_id, run, inserted.assigned);
  return created;
}

absl::StatusOr<v1::RunInfo> MemoryStore::GetRun(const std::string& run_id) {
  FLEETMARK_RETURN_IF_ERROR(internal::CheckUuid("run_id", run_id));
  MemoryTransaction txn(*db_);
  std::optional<v1::RunInfo> run = memory::LoadRun(txn, Lower(run_id));
  if (!run) return absl::NotFoundError(absl::StrCat("run ", run_id, " not found"));
  return *std::move(run);
}

absl::StatusOr<std::string> MemoryStore::ResolveRunId(const std::string& id_or_prefix) {
  FLEETMARK_ASSIGN_OR_RETURN(const auto range, internal::RunIdRange(id_or_prefix));
  MemoryTransaction txn(*db_);
  auto& t = txn.tables();
  if (range.first == range.second) {  // a UUID: a job's id names its run
    const std::string& id = range.first;
    auto job = t.jobs.find(id);
    return job != t.jobs.end() && t.runs.count(id) == 0 ? job->second.run_id : id;
  }
  std::vector<std::string> ids;
  for (auto it = t.runs.lower_bound(range.first); it != t.runs.end() && it->first <= range.second && ids.size() < 3;
       ++it) {
    ids.push_back(it->first);
  }
  return internal::OneRunOf(id_or_prefix, ids);
}

absl::StatusOr<std::vector<v1::RunInfo>> MemoryStore::ListRuns(int limit) {
  if (limit < 1 || limit > 1000) {
    return absl::InvalidArgumentError(absl::StrCat("limit: 1 <= limit <= 1000, got ", limit));
  }
  MemoryTransaction txn(*db_);
  std::vector<const Run*> sorted;
  for (const auto& [id, run] : txn.tables().runs) sorted.push_back(&run);
  std::sort(sorted.begin(), sorted.end(), [](const Run* a, const Run* b) {
    if (a->created_at != b->created_at) return a->created_at > b->created_at;
    if (a->seq != b->seq) return a->seq > b->seq;
    return a->run_id < b->run_id;
  });
  if (sorted.size() > static_cast<size_t>(limit)) sorted.resize(limit);
  std::vector<v1::RunInfo> runs;
  for (const Run* run : sorted) runs.push_back(*memory::LoadRun(txn, run->run_id));
  return runs;
}

absl::StatusOr<CancelledRun> MemoryStore::CancelRun(const std::string& given_run_id) {
  FLEETMARK_RETURN_IF_ERROR(internal::CheckUuid("run_id", given_run_id));
  const std::string run_id = Lower(given_run_id);
  MemoryTransaction txn(*db_);
  auto& t = txn.tables();
  auto it = t.runs.find(run_id);
  if (it == t.runs.end()) return absl::NotFoundError(absl::StrCat("run ", given_run_id, " not found"));
  const std::string status = it->second.status;
  if (status == "done" || status == "failed" || status == "cancelled") {
    return absl::FailedPreconditionError(absl::StrCat("run ", given_run_id, " already ended (", status, ")"));
  }
  CancelledRun cancelled;
  Notification ended{.kind = NotificationKind::kEnded};
  for (auto& [id, job] : t.jobs) {
    if (job.run_id != run_id || (job.status != kJobQueued && !Live(job))) continue;
    if (job.status != kJobQueued) {
      cancelled.agent_jobs.emplace_back(job.agent_id, job.job_id);
      ended.agent_ids.push_back(job.agent_id);
      ended.job_ids.push_back(job.job_id);
    }
    job.status = kJobCancelled;
    job.message = "cancelled by user";
    job.lease_expires_at.reset();
    job.finished_at = txn.now();
  }
  it->second.status = "cancelled";
  it->second.finished_at = txn.now();
  txn.Notify(std::move(ended));
  cancelled.run = *memory::LoadRun(txn, run_id);
  return cancelled;
}

absl::StatusOr<std::vector<ClaimedJob>> MemoryStore::ClaimJobs(const std::vector<std::string>& agent_ids,
                                                               absl::Duration lease) {
  std::vector<ClaimedJob> claimed;
  if (agent_ids.empty()) return claimed;
  for (const std::string& id : agent_ids) FLEETMARK_RETURN_IF_ERROR(internal::CheckUuid("agent_id", id));
  std::vector<std::string> ids;
  std::set<std::string> seen;
  for (const std::string& id : agent_ids) {
    if (seen.insert(Lower(id)).second) ids.push_back(Lower(id));
  }
  MemoryTransaction txn(*db_);
  auto& t = txn.tables();
  std::set<std::string> runs;
  for (const std::string& agent_id : memory::AgentsFreeToStart(txn, ids, true)) {
    if (HasActiveJob(txn, agent_id)) continue;
    Job* job = OldestQueued(txn, agent_id);
    if (job == nullptr) continue;
    job->status = kJobAssigned;
    ++job->attempts;
    job->lease_expires_at = txn.now() + lease;
    job->coordinator_id = options_.coordinator_id;
    const Run& run = t.runs.at(job->run_id);
    ClaimedJob& c = claimed.emplace_back();
    c.agent_id = agent_id;
    c.assignment.set_run_id(run.run_id);
    c.assignment.set_quick(run.quick);
    c.assignment.set_filter(run.filter);
    *c.assignment.mutable_plan() = run.plan;
    c.assignment.set_job_id(job->job_id);
    c.assignment.set_attempt(job->attempts);
    if (job->attempts > 1) {
      for (const std::string& case_id : memory::StoredCases(txn, *job, /*count_cancelled=*/false)) {
        c.assignment.add_stored_case_ids(case_id);
      }
    }
    runs.insert(run.run_id);
  }
  for (const std::string& run_id : runs) memory::RefreshRun(txn, run_id);
  return claimed;
}

absl::StatusOr<bool> MemoryStore::ResumeJob(const std::string& job_id, const std::string& agent_id,
                                            absl::Duration lease) {
  FLEETMARK_RETURN_IF_ERROR(internal::CheckUuid("running_job_id", job_id));
  FLEETMARK_RETURN_IF_ERROR(internal::CheckUuid("agent_id", agent_id));
  MemoryTransaction txn(*db_);
  auto it = txn.tables().jobs.find(Lower(job_id));
  if (it == txn.tables().jobs.end() || it->second.agent_id != Lower(agent_id)) return false;
  Job& job = it->second;
  // A re-queued job of this agent is taken back (one more attempt) unless the agent has
  // another active job.
  if (!Live(job) && !(job.status == kJobQueued && !HasActiveJob(txn, job.agent_id))) return false;
  if (job.status == kJobQueued) ++job.attempts;
  job.status = kJobRunning;
  job.lease_expires_at = txn.now() + lease;
  job.coordinator_id = options_.coordinator_id;
  memory::RefreshRun(txn, job.run_id);
  return true;
}

absl::Status MemoryStore::UpdateJobs(const std::vector<JobUpdate>& updates, absl::Duration lease) {
  std::map<std::pair<std::string, std::string>, JobUpdate> last;
  for (const JobUpdate& u : updates) {
    FLEETMARK_RETURN_IF_ERROR(internal::CheckUuid("job_id", u.job_id));
    FLEETMARK_RETURN_IF_ERROR(internal::CheckUuid("agent_id", u.agent_id));
    if (u.has_progress && u.cases_done > u.cases_total) {
      return absl::InvalidArgumentError(absl::StrCat("job_progress.cases_done: 0 <= cases_done <= cases_total (",
                                                     u.cases_total, "), got ", u.cases_done));
    }
    JobUpdate& kept = last[{Lower(u.job_id), Lower(u.agent_id)}];
    if (u.has_progress || !kept.has_progress) kept = u;  // an accept after a progress keeps it
  }
  if (last.empty()) return absl::OkStatus();
  MemoryTransaction txn(*db_);
  for (const auto& [key, u] : last) {
    auto it = txn.tables().jobs.find(key.first);
    if (it == txn.tables().jobs.end() || it->second.agent_id != key.second || !Live(it->second)) continue;
    Job& job = it->second;
    job.status = kJobRunning;
    if (u.has_progress) {
      // Never backwards: a late report of an earlier moment does not undo a later one.
      job.cases_done = std::max(job.cases_done, std::min<uint32_t>(u.cases_done, INT32_MAX));
      job.cases_total = std::min<uint32_t>(u.cases_total, INT32_MAX);
    }
    job.lease_expires_at = txn.now() + lease;
  }
  return absl::OkStatus();
}

absl::Status MemoryStore::MarkJobRunning(const std::string& job_id, const std::string& agent_id, absl::Duration lease) {
  return UpdateJobs({JobUpdate{.job_id = job_id, .agent_id = agent_id}}, lease);
}

absl::Status MemoryStore::UpdateJobProgress(const std::string& job_id, const std::string& agent_id, uint32_t cases_done,
                                            uint32_t cases_total, absl::Duration lease) {
  return UpdateJobs({JobUpdate{.job_id = job_id,
                               .agent_id = agent_id,
                               .has_progress = true,
                               .cases_done = cases_done,
                               .cases_total = cases_total}},
                    lease);
}

absl::StatusOr<std::vector<absl::Status>> MemoryStore::FinishJobs(const std::vector<JobEnd>& ends) {
  std::vector<absl::Status> statuses(ends.size());
  std::vector<size_t> valid;
  for (size_t i = 0; i < ends.size(); ++i) {
    statuses[i] = internal::CheckUuid("job_id", ends[i].job_id);
    if (statuses[i].ok()) statuses[i] = internal::CheckUuid("agent_id", ends[i].agent_id);
    if (statuses[i].ok()) valid.push_back(i);
  }
  if (valid.empty()) return statuses;
  MemoryTransaction txn(*db_);
  auto& t = txn.tables();
  std::vector<memory::EndedJob> ended;
  std::set<std::string> runs;
  for (size_t i : valid) {
    const JobOutcome& o = ends[i].outcome;
    auto it = t.jobs.find(Lower(ends[i].job_id));
    const bool owned = it != t.jobs.end() && it->second.agent_id == Lower(ends[i].agent_id);
    if (!owned) {
      statuses[i] = absl::NotFoundError(absl::StrCat("job ", ends[i].job_id, " is not a job of this agent"));
      continue;
    }
    Job& job = it->second;
    if (!Live(job)) continue;  // already ended (cancelled, expired, an earlier end): nothing to do
    std::string status = o.cancelled ? kJobCancelled : o.ok ? kJobDone : kJobFailed;
    std::string kind = (o.ok || o.cancelled) ? "" : o.deferred ? "infrastructure" : "benchmark";
    std::string message = StorableText(o.message, 4096);
    // A job reported done is done only with a stored result (any status) for each case.
    const Run& run = t.runs.at(job.run_id);
    if (status == kJobDone && run.case_ids && !run.case_ids->empty()) {
      const size_t cases = run.case_ids->size();
      const size_t stored = memory::StoredCases(txn, job, /*count_cancelled=*/true).size();
      if (cases > stored) {
        status = kJobFailed;
        kind = "infrastructure";
        message = absl::StrCat("infrastructure: the agent reported the job done, but ", cases - stored, " of its ",
                               cases, " cases have no stored result (lost before the coordinator stored them)");
      }
    }
    job.status = status;
    job.failure_kind = kind;
    job.message = message;
    job.lease_expires_at.reset();
    job.finished_at = txn.now();
    if (status == kJobDone) job.cases_done = std::max(job.cases_done, job.cases_total);
    ended.push_back({job.job_id, job.agent_id, job.run_id, &o});
    runs.insert(job.run_id);
  }
  memory::UpdateAgentsHealth(txn, ended, options_.health);
  for (const std::string& run_id : runs) memory::RefreshRun(txn, run_id);
  return statuses;
}

absl::StatusOr<std::vector<std::string>> MemoryStore::EndedJobs(const std::vector<std::string>& job_ids) {
  std::vector<std::string> ended;
  if (job_ids.empty()) return ended;
  for (const std::string& id : job_ids) FLEETMARK_RETURN_IF_ERROR(internal::CheckUuid("job_id", id));
  MemoryTransaction txn(*db_);
  std::set<std::string> wanted;
  for (const std::string& id : job_ids) wanted.insert(Lower(id));
  for (const std::string& id : wanted) {
    auto it = txn.tables().jobs.find(id);
    if (it == txn.tables().jobs.end()) continue;
    const std::string& s = it->second.status;
    if (s == kJobDone || s == kJobFailed || s == kJobCancelled) ended.push_back(id);
  }
  return ended;
}

absl::StatusOr<std::vector<ExpiredJob>> MemoryStore::ExpireLeases() {
  MemoryTransaction txn(*db_);
  return ExpireInTxn(txn, false, "", "", options_.requeue_timeout);
}

absl::StatusOr<std::vector<ExpiredJob>> MemoryStore::ReleaseAgentJobs(const std::string& agent_id,
                                                                      const std::string& keep_job_id) {
  FLEETMARK_RETURN_IF_ERROR(internal::CheckUuid("agent_id", agent_id));
  MemoryTransaction txn(*db_);
  return ExpireInTxn(txn, true, Lower(agent_id), keep_job_id, options_.requeue_timeout);
}

namespace memory {

void PutResult(MemoryTransaction& txn, const std::string& id, const v1::CaseResult& r, const Job& job, bool emulated) {
  auto& t = txn.tables();
  Result& row = t.results[id];
  row.result_id = id;
  row.run_id = job.run_id;
  row.job_id = job.job_id;
  row.agent_id = job.agent_id;
  row.case_id = r.spec().case_id();
  row.status = internal::CaseStatusName(r.status());
  row.strategy_label = r.spec().strategy().label();
  if (r.has_fingerprint()) row.fingerprint_hash = engine::FingerprintHash(r.fingerprint());
  row.median_ns = r.stats().median_ns();
  if (r.finished_unix_ns() != 0) row.finished_at = absl::FromUnixMicros(r.finished_unix_ns() / 1000);
  row.received_at = txn.now();
  row.seq = txn.seq();
  row.emulated = emulated;
  row.bytes = r.SerializeAsString();
  row.run_created_at = t.runs.at(job.run_id).created_at;
}

}  // namespace memory

absl::StatusOr<std::vector<ResultOutcome>> MemoryStore::InsertResults(const std::vector<AgentResult>& results) {
  std::vector<ResultOutcome> outcomes(results.size());
  for (size_t i = 0; i < results.size(); ++i) {
    const v1::CaseResult& r = *results[i].result;
    outcomes[i].result_id = r.result_id();
    absl::Status s = internal::CheckIncomingResult(r, /*job_id_too=*/true);
    if (!s.ok()) {
      outcomes[i].rejected = true;
      outcomes[i].message = std::string(s.message());
    }
  }
  MemoryTransaction txn(*db_);
  auto& t = txn.tables();
  std::vector<size_t> rows;  // checked, this agent's job, a case of its run
  for (size_t i = 0; i < results.size(); ++i) {
    if (outcomes[i].rejected) continue;
    const v1::CaseResult& r = *results[i].result;
    auto job = t.jobs.find(Lower(r.job_id()));
    if (job == t.jobs.end() || job->second.agent_id != results[i].agent_id) {
      outcomes[i].rejected = true;
      outcomes[i].message = absl::StrCat("result.job_id: job ", r.job_id(), " is not a job of this agent");
      continue;
    }
    const Run& run = t.runs.at(job->second.run_id);
    if (run.case_ids &&
        std::find(run.case_ids->begin(), run.case_ids->end(), r.spec().case_id()) == run.case_ids->end()) {
      outcomes[i].rejected = true;
      outcomes[i].message = absl::StrCat("result.spec.case_id: \"", r.spec().case_id().substr(0, 200),
                                         "\" is not a case of job ", Lower(r.job_id()), "'s plan");
      continue;
    }
    rows.push_back(i);
  }
  // The first occurrence of each new id; of new ids sharing a (job, case) with each
  // other or with a stored result, the stored one stays and the smallest new id wins
  // (PgStore's INSERT ... ORDER BY result_id ON CONFLICT DO NOTHING).
  std::map<std::string, size_t> first;
  for (size_t i : rows) first.emplace(Lower(results[i].result->result_id()), i);
  std::set<std::pair<std::string, std::string>> taken;  // (job, case) with a result
  for (const auto& [id, r] : t.results) taken.insert({r.job_id, r.case_id});
  std::set<std::string> stored;
  for (const auto& [id, i] : first) {
    if (t.results.count(id) > 0) continue;
    const v1::CaseResult& r = *results[i].result;
    const Job& job = t.jobs.at(Lower(r.job_id()));
    if (!taken.insert({job.job_id, r.spec().case_id()}).second) continue;
    memory::PutResult(txn, id, r, job, t.agents.at(job.agent_id).host.emulated());
    stored.insert(id);
  }
  std::set<std::string> seen;
  for (size_t i : rows) {
    const std::string id = Lower(results[i].result->result_id());
    if (stored.count(id) > 0 && seen.insert(id).second) {
      outcomes[i].stored = true;
    } else {
      outcomes[i].duplicate = true;
    }
  }
  return outcomes;
}

absl::StatusOr<v1::ExportResultsResponse> MemoryStore::ExportResults(const std::string& run_id,
                                                                     const std::string& agent_name) {
  FLEETMARK_RETURN_IF_ERROR(internal::CheckUuid("run_id", run_id));
  MemoryTransaction txn(*db_);
  FLEETMARK_ASSIGN_OR_RETURN(ResultExportIndex index, ExportIndexInTxn(txn, Lower(run_id), agent_name));
  std::vector<std::string> ids;
  for (const ResultExportIndex::Entry& entry : index.results) ids.push_back(entry.result_id);
  FLEETMARK_ASSIGN_OR_RETURN(std::vector<v1::CaseResult> results, LoadResultsInTxn(txn, ids));
  v1::ExportResultsResponse response;
  *response.mutable_run() = std::move(index.run);
  for (auto& [name, host] : index.hosts) (*response.mutable_hosts())[name] = std::move(host);
  for (v1::CaseResult& result : results) *response.add_results() = std::move(result);
  return response;
}

absl::StatusOr<ResultExportIndex> MemoryStore::ListExportResults(const std::string& run_id,
                                                                 const std::string& agent_name) {
  FLEETMARK_RETURN_IF_ERROR(internal::CheckUuid("run_id", run_id));
  MemoryTransaction txn(*db_);
  return ExportIndexInTxn(txn, Lower(run_id), agent_name);
}

absl::StatusOr<std::vector<v1::CaseResult>> MemoryStore::LoadResults(const std::vector<std::string>& result_ids) {
  for (size_t i = 0; i < result_ids.size(); ++i) {
    FLEETMARK_RETURN_IF_ERROR(internal::CheckUuid(absl::StrCat("result_ids[", i, "]"), result_ids[i]));
  }
  MemoryTransaction txn(*db_);
  return LoadResultsInTxn(txn, result_ids);
}

}  // namespace fleetmark::store
