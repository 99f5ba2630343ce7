// Store: runs, jobs (claims, leases, progress) and case results.
#include <algorithm>
#include <array>
#include <climits>
#include <map>
#include <set>
#include <utility>

#include <pqxx/pqxx>

#include "absl/strings/ascii.h"
#include "engine/common/steady_wait.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "coordinator/store/result_rows.h"
#include "coordinator/store/pg_store.h"
#include "coordinator/store/run_case_ids.h"
#include "coordinator/store/store_health.h"
#include "coordinator/store/store_hosts.h"
#include "coordinator/store/store_internal.h"
#include "coordinator/store/store_runs.h"
#include "engine/common/status_macros.h"
#include "engine/common/text.h"

namespace fleetmark::store {

using internal::InTransaction;
using internal::InTransactionOr;

namespace {

// Placeholder agent id for the lease sweep (matches no agent).
constexpr char kNoAgent[] = "00000000-0000-0000-0000-000000000000";

std::vector<ExpiredJob> ExpireInTxn(pqxx::work& txn, bool release, const std::string& agent_id,
                                    const std::string& keep_job_id, absl::Duration requeue_timeout) {
  std::vector<ExpiredJob> expired;
  std::set<std::string> runs;
  // Leases that ran out (or, on release, the agent's other jobs), then, in the sweep,
  // queued jobs past their expiry (submit --queue_offline).
  std::vector<pqxx::result> results = {
      txn.exec_prepared("fm_expire_jobs", release, agent_id, keep_job_id, internal::IntervalParam(requeue_timeout))};
  if (!release) results.push_back(txn.exec_prepared("fm_expire_queued"));
  Notification requeued{.kind = NotificationKind::kQueued}, failed{.kind = NotificationKind::kEnded};
  for (const pqxx::result& rows : results) {
    for (const auto& row : rows) {
      ExpiredJob& job = expired.emplace_back();
      job.job_id = row[0].as<std::string>();
      job.run_id = row[1].as<std::string>();
      job.agent_id = row[2].as<std::string>();
      job.failed = row[3].as<std::string>() == kJobFailed;
      job.done = row[3].as<std::string>() == kJobDone;
      job.attempts = row[4].as<uint32_t>();
      runs.insert(job.run_id);
      if (job.failed || job.done) {
        failed.agent_ids.push_back(job.agent_id);
        failed.job_ids.push_back(job.job_id);
      } else {
        requeued.agent_ids.push_back(job.agent_id);
      }
    }
  }
  for (const std::string& run_id : runs) internal::RefreshRun(txn, run_id);
  // The coordinators holding these agents claim the re-queued jobs and stop the failed ones.
  internal::Notify(txn, requeued);
  internal::Notify(txn, failed);
  return expired;
}

}  // namespace

absl::StatusOr<v1::RunInfo> PgStore::CreateRun(const NewRun& run) {
  FLEETMARK_RETURN_IF_ERROR(internal::ValidateNewRun(run));
  return InTransaction(*pool_, "create run", [&](pqxx::work& txn) { return internal::CreateRunInTxn(txn, run); });
}

absl::StatusOr<PgStore::CreatedRun> PgStore::CreateRunAndClaim(const NewRun& run,
                                                               const std::vector<std::string>& idle_agent_ids,
                                                               absl::Duration lease) {
  FLEETMARK_RETURN_IF_ERROR(internal::ValidateNewRun(run));
  for (const std::string& id : idle_agent_ids) FLEETMARK_RETURN_IF_ERROR(internal::CheckUuid("agent_id", id));
  // One job per host (store_hosts.h): of the idle agents this run gives a job, those
  // whose host neighbour runs one (or is served first) get theirs queued.
  const std::set<std::string> in_run(run.agent_ids.begin(), run.agent_ids.end());
  std::vector<std::string> idle_in_run;
  for (const std::string& id : idle_agent_ids) {
    if (in_run.count(id) > 0) idle_in_run.push_back(id);
  }
  FLEETMARK_ASSIGN_OR_RETURN(internal::InsertedRun inserted, InTransaction(*pool_, "create run", [&](pqxx::work& txn) {
                               const std::vector<std::string> assign_to =
                                   internal::AgentsFreeToStart(txn, idle_in_run, false);
                               return internal::InsertRun(txn, run, assign_to, lease, options_.coordinator_id);
                             }));
  // The assignments (one copy of the plan each) are built after the commit, not with
  // the transaction and its row locks still open.
  CreatedRun created;
  created.run_id = inserted.run_id;
  created.run = std::move(inserted.info);
  created.claimed = internal::ClaimedJobsOfNewRun(created.run_id, run, inserted.assigned);
  return created;
}

absl::StatusOr<v1::RunInfo> PgStore::GetRun(const std::string& run_id) {
  FLEETMARK_RETURN_IF_ERROR(internal::CheckUuid("run_id", run_id));
  return InTransactionOr(*pool_, "get run", [&](pqxx::work& txn) -> absl::StatusOr<v1::RunInfo> {
    std::optional<v1::RunInfo> run = internal::LoadRun(txn, run_id);
    if (!run) return absl::NotFoundError(absl::StrCat("run ", run_id, " not found"));
    return *std::move(run);
  });
}

absl::StatusOr<std::vector<v1::RunInfo>> PgStore::ListRuns(int limit) {
  if (limit < 1 || limit > 1000) {
    return absl::InvalidArgumentError(absl::StrCat("limit: 1 <= limit <= 1000, got ", limit));
  }
  return InTransaction(*pool_, "list runs", [&](pqxx::work& txn) {
    std::vector<v1::RunInfo> runs;
    pqxx::result r = txn.exec_params("SELECT run_id::text FROM runs ORDER BY created_at DESC, run_id LIMIT $1", limit);
    for (const auto& row : r) {
      if (auto run = internal::LoadRun(txn, row[0].as<std::string>())) runs.push_back(*std::move(run));
    }
    return runs;
  });
}

absl::StatusOr<CancelledRun> PgStore::CancelRun(const std::string& run_id) {
  FLEETMARK_RETURN_IF_ERROR(internal::CheckUuid("run_id", run_id));
  return InTransactionOr(*pool_, "cancel run", [&](pqxx::work& txn) -> absl::StatusOr<CancelledRun> {
    pqxx::result r = txn.exec_params("SELECT status FROM runs WHERE run_id = $1::uuid FOR UPDATE", run_id);
    if (r.empty()) return absl::NotFoundError(absl::StrCat("run ", run_id, " not found"));
    const std::string status = r[0][0].as<std::string>();
    if (status == "done" || status == "failed" || status == "cancelled") {
      return absl::FailedPreconditionError(absl::StrCat("run ", run_id, " already ended (", status, ")"));
    }
    CancelledRun cancelled;
    pqxx::result jobs = txn.exec_params(
        "WITH c AS (SELECT job_id, agent_id, status FROM jobs WHERE run_id = $1::uuid"
        "           AND status IN ('queued', 'assigned', 'running') FOR UPDATE) "
        "UPDATE jobs j SET status = 'cancelled', message = 'cancelled by user', lease_expires_at = NULL,"
        " finished_at = now(), updated_at = now() FROM c WHERE j.job_id = c.job_id "
        "RETURNING c.agent_id::text, c.job_id::text, c.status",
        run_id);
    Notification ended{.kind = NotificationKind::kEnded};
    for (const auto& row : jobs) {
      if (row[2].as<std::string>() != kJobQueued) {
        cancelled.agent_jobs.emplace_back(row[0].as<std::string>(), row[1].as<std::string>());
        ended.agent_ids.push_back(row[0].as<std::string>());
        ended.job_ids.push_back(row[1].as<std::string>());
      }
    }
    txn.exec_params("UPDATE runs SET status = 'cancelled', finished_at = now() WHERE run_id = $1::uuid", run_id);
    // The coordinators holding these agents tell them to stop on commit.
    internal::Notify(txn, ended);
    cancelled.run = *internal::LoadRun(txn, run_id);
    return cancelled;
  });
}

absl::StatusOr<std::vector<ClaimedJob>> PgStore::ClaimJobs(const std::vector<std::string>& agent_ids,
                                                           absl::Duration lease) {
  std::vector<ClaimedJob> claimed;
  if (agent_ids.empty()) return claimed;
  for (const std::string& id : agent_ids) FLEETMARK_RETURN_IF_ERROR(internal::CheckUuid("agent_id", id));
  return InTransaction(*pool_, "claim jobs", [&](pqxx::work& txn) {
    // One job per host (store_hosts.h): agents whose host neighbour runs a job claim nothing now.
    const std::vector<std::string> free = internal::AgentsFreeToStart(txn, agent_ids, true);
    if (free.empty()) return claimed;
    pqxx::result r = txn.exec_prepared("fm_claim_jobs", internal::UuidArray(free), internal::IntervalParam(lease),
                                       options_.coordinator_id);
    if (r.empty()) return claimed;
    std::set<std::string> run_ids;
    for (const auto& row : r) run_ids.insert(row[1].as<std::string>());
    std::map<std::string, v1::JobAssignment> templates;
    pqxx::result runs = txn.exec_prepared(
        "fm_job_assignment_data", internal::UuidArray(std::vector<std::string>(run_ids.begin(), run_ids.end())));
    for (const auto& row : runs) {
      v1::JobAssignment& a = templates[row[0].as<std::string>()];
      a.set_run_id(row[0].as<std::string>());
      a.set_quick(row[1].as<bool>());
      a.set_filter(row[2].as<std::string>());
      internal::ParseProtoField(row[3], a.mutable_plan());
    }
    std::vector<std::string> again;  // claimed before: they may have stored results
    for (const auto& row : r) {
      ClaimedJob& job = claimed.emplace_back();
      job.agent_id = row[2].as<std::string>();
      job.assignment = templates[row[1].as<std::string>()];
      job.assignment.set_job_id(row[0].as<std::string>());
      job.assignment.set_attempt(row[3].as<uint32_t>());
      if (job.assignment.attempt() > 1) again.push_back(job.assignment.job_id());
    }
    if (!again.empty()) {
      std::map<std::string, std::vector<std::string>> stored;
      for (const auto& row : txn.exec_prepared("fm_stored_case_ids", internal::UuidArray(again))) {
        stored[row[0].as<std::string>()].push_back(row[1].as<std::string>());
      }
      for (ClaimedJob& job : claimed) {
        for (std::string& case_id : stored[job.assignment.job_id()]) {
          job.assignment.add_stored_case_ids(std::move(case_id));
        }
      }
    }
    for (const std::string& run_id : run_ids) internal::RefreshRun(txn, run_id);
    return claimed;
  });
}

absl::StatusOr<bool> PgStore::ResumeJob(const std::string& job_id, const std::string& agent_id, absl::Duration lease) {
  FLEETMARK_RETURN_IF_ERROR(internal::CheckUuid("running_job_id", job_id));
  FLEETMARK_RETURN_IF_ERROR(internal::CheckUuid("agent_id", agent_id));
  return InTransaction(*pool_, "resume job", [&](pqxx::work& txn) {
    // A re-queued job of this agent is taken back (one more attempt) unless the agent
    // has another active job.
    pqxx::result r = txn.exec_params(
        "UPDATE jobs SET attempts = CASE WHEN status = 'queued' THEN attempts + 1 ELSE attempts END,"
        " status = 'running', lease_expires_at = now() + $3::interval, updated_at = now(),"
        " coordinator_id = $4 "
        "WHERE job_id = $1::uuid AND agent_id = $2::uuid "
        "  AND (status IN ('assigned', 'running') OR (status = 'queued' AND NOT EXISTS ("
        "       SELECT 1 FROM jobs b WHERE b.agent_id = $2::uuid AND b.status IN ('assigned', 'running')))) "
        "RETURNING run_id::text",
        job_id, agent_id, internal::IntervalParam(lease), options_.coordinator_id);
    if (r.empty()) return false;
    internal::RefreshRun(txn, r[0][0].as<std::string>());
    return true;
  });
}

absl::Status PgStore::UpdateJobs(const std::vector<JobUpdate>& updates, absl::Duration lease) {
  // Last update per (job, agent), in job id order (a fixed lock order). An agent
  // naming another's job keeps its own row, which matches nothing.
  std::map<std::pair<std::string, std::string>, JobUpdate> last;
  for (const JobUpdate& u : updates) {
    FLEETMARK_RETURN_IF_ERROR(internal::CheckUuid("job_id", u.job_id));
    FLEETMARK_RETURN_IF_ERROR(internal::CheckUuid("agent_id", u.agent_id));
    if (u.has_progress && u.cases_done > u.cases_total) {
      return absl::InvalidArgumentError(absl::StrCat("job_progress.cases_done: 0 <= cases_done <= cases_total (",
                                                     u.cases_total, "), got ", u.cases_done));
    }
    JobUpdate& kept = last[{absl::AsciiStrToLower(u.job_id), absl::AsciiStrToLower(u.agent_id)}];
    if (u.has_progress || !kept.has_progress) {
      kept = u;
    }  // else: an accept after a progress keeps the progress
  }
  if (last.empty()) return absl::OkStatus();
  std::vector<std::string> jobs, agents;
  std::vector<int64_t> done, total;  // total -1: no progress in this update
  for (const auto& [key, u] : last) {
    jobs.push_back(key.first);
    agents.push_back(key.second);
    done.push_back(u.has_progress ? static_cast<int64_t>(std::min<uint32_t>(u.cases_done, INT32_MAX)) : 0);
    total.push_back(u.has_progress ? static_cast<int64_t>(std::min<uint32_t>(u.cases_total, INT32_MAX)) : -1);
  }
  // No run refresh: an assigned job already counts as active and started, so its run
  // is 'running' (set when the job was claimed) and stays so.
  return InTransaction(*pool_, "job updates",
                       [&](pqxx::work& txn) {
                         txn.exec_prepared("fm_jobs_update", internal::UuidArray(jobs), internal::UuidArray(agents),
                                           absl::StrCat("{", absl::StrJoin(done, ","), "}"),
                                           absl::StrCat("{", absl::StrJoin(total, ","), "}"),
                                           internal::IntervalParam(lease));
                         return true;
                       })
      .status();
}

absl::Status PgStore::MarkJobRunning(const std::string& job_id, const std::string& agent_id, absl::Duration lease) {
  return UpdateJobs({JobUpdate{.job_id = job_id, .agent_id = agent_id}}, lease);
}

absl::Status PgStore::UpdateJobProgress(const std::string& job_id, const std::string& agent_id, uint32_t cases_done,
                                        uint32_t cases_total, absl::Duration lease) {
  return UpdateJobs({JobUpdate{.job_id = job_id,
                               .agent_id = agent_id,
                               .has_progress = true,
                               .cases_done = cases_done,
                               .cases_total = cases_total}},
                    lease);
}

absl::StatusOr<std::vector<absl::Status>> PgStore::FinishJobs(const std::vector<JobEnd>& ends) {
  std::vector<absl::Status> statuses(ends.size());
  std::vector<size_t> valid;  // positions in `ends` of the items with well-formed ids
  for (size_t i = 0; i < ends.size(); ++i) {
    statuses[i] = internal::CheckUuid("job_id", ends[i].job_id);
    if (statuses[i].ok()) statuses[i] = internal::CheckUuid("agent_id", ends[i].agent_id);
    if (statuses[i].ok()) valid.push_back(i);
  }
  if (valid.empty()) return statuses;
  std::vector<std::string> jobs, agents, status, kind, message;
  for (size_t i : valid) {
    const JobOutcome& o = ends[i].outcome;
    jobs.push_back(ends[i].job_id);
    agents.push_back(ends[i].agent_id);
    status.push_back(o.cancelled ? kJobCancelled : o.ok ? kJobDone : kJobFailed);
    kind.push_back((o.ok || o.cancelled) ? "" : o.deferred ? "infrastructure" : "benchmark");
    message.push_back(StorableText(o.message, 4096));
  }
  return InTransactionOr(*pool_, "job ends", [&](pqxx::work& txn) -> absl::StatusOr<std::vector<absl::Status>> {
    // 0. A job reported done is done only with a stored result for each of its
    // cases; else its results were lost on the way: failed as infrastructure.
    std::vector<std::string> status_now = status, kind_now = kind, message_now = message;
    std::vector<std::string> done_jobs, done_agents;
    std::vector<size_t> done_at;  // positions among `valid`
    for (size_t k = 0; k < valid.size(); ++k) {
      if (status[k] != kJobDone) continue;
      done_jobs.push_back(jobs[k]);
      done_agents.push_back(agents[k]);
      done_at.push_back(k);
    }
    if (!done_jobs.empty()) {
      for (const auto& row : txn.exec_prepared("fm_jobs_missing_results", internal::UuidArray(done_jobs),
                                               internal::UuidArray(done_agents))) {
        const size_t k = done_at[row[0].as<size_t>() - 1];
        const int64_t cases = row[1].as<int64_t>(), stored = row[2].as<int64_t>();
        status_now[k] = kJobFailed;
        kind_now[k] = "infrastructure";
        message_now[k] =
            absl::StrCat("infrastructure: the agent reported the job done, but ", cases - stored, " of its ", cases,
                         " cases have no stored result (lost before the "
                         "coordinator stored them)");
      }
    }
    // 1. The jobs (locked in id order), ended.
    pqxx::result r = txn.exec_prepared("fm_jobs_finish", internal::UuidArray(jobs), internal::UuidArray(agents),
                                       internal::TextArray(status_now), internal::TextArray(kind_now),
                                       internal::TextArray(message_now));
    std::vector<internal::EndedJob> ended;
    std::vector<bool> ended_now(valid.size(), false);
    std::set<std::string> runs;
    for (const auto& row : r) {
      const size_t k = row[0].as<size_t>() - 1;  // 1-based position among `valid`
      ended_now[k] = true;
      const JobEnd& e = ends[valid[k]];
      ended.push_back({e.job_id, e.agent_id, row[1].as<std::string>(), &e.outcome});
      runs.insert(row[1].as<std::string>());
    }
    // 2. Their agents' health (rows locked in id order).
    internal::UpdateAgentsHealth(txn, ended, options_.health);
    // 3. Their runs, each recounted once, in id order (std::set).
    for (const std::string& run_id : runs) internal::RefreshRun(txn, run_id);
    // The others: already ended (nothing to do), or not this agent's job.
    std::vector<absl::Status> out = statuses;
    if (ended.size() < valid.size()) {
      std::vector<std::string> rest_jobs, rest_agents;
      std::vector<size_t> rest;
      for (size_t k = 0; k < valid.size(); ++k) {
        if (ended_now[k]) continue;
        rest.push_back(valid[k]);
        rest_jobs.push_back(jobs[k]);
        rest_agents.push_back(agents[k]);
      }
      pqxx::result not_owned =
          txn.exec_prepared("fm_jobs_not_owned", internal::UuidArray(rest_jobs), internal::UuidArray(rest_agents));
      for (const auto& row : not_owned) {
        const size_t i = rest[row[0].as<size_t>() - 1];
        out[i] = absl::NotFoundError(absl::StrCat("job ", ends[i].job_id, " is not a job of this agent"));
      }
    }
    return out;
  });
}

absl::StatusOr<std::vector<std::string>> PgStore::EndedJobs(const std::vector<std::string>& job_ids) {
  std::vector<std::string> ended;
  if (job_ids.empty()) return ended;
  for (const std::string& id : job_ids) FLEETMARK_RETURN_IF_ERROR(internal::CheckUuid("job_id", id));
  return InTransaction(*pool_, "ended jobs", [&](pqxx::work& txn) {
    pqxx::result r = txn.exec_params(
        "SELECT job_id::text FROM jobs WHERE job_id = ANY($1::uuid[]) AND status IN ('done', 'failed', 'cancelled')",
        internal::UuidArray(job_ids));
    for (const auto& row : r) ended.push_back(row[0].as<std::string>());
    return ended;
  });
}

absl::StatusOr<std::vector<ExpiredJob>> PgStore::ExpireLeases() {
  return InTransaction(*pool_, "expire leases", [&](pqxx::work& txn) {
    return ExpireInTxn(txn, false, kNoAgent, "", options_.requeue_timeout);
  });
}

absl::StatusOr<std::vector<ExpiredJob>> PgStore::ReleaseAgentJobs(const std::string& agent_id,
                                                                  const std::string& keep_job_id) {
  FLEETMARK_RETURN_IF_ERROR(internal::CheckUuid("agent_id", agent_id));
  return InTransaction(*pool_, "release agent jobs", [&](pqxx::work& txn) {
    return ExpireInTxn(txn, true, agent_id, keep_job_id, options_.requeue_timeout);
  });
}

namespace {

struct JobOwner {
  std::string agent_id;
  std::string run_id;
  bool emulated = false;       // the agent's HostInfo.emulated now, stored with each result
  std::string run_created_at;  // the run's created_at (timestamptz text): the partition key
};

// Streams rows `indices` of `results` into `table` with COPY, one raw text line per
// row (internal::AppendCopyLine escapes). libpqxx 6.4's only public raw-line writer is
// tablewriter, deprecated in favour of stream_to, whose write_raw_line is private and
// whose per-character escaper cost ~10% of the coordinator's CPU while ingesting.
void CopyRows(pqxx::work& txn, const std::string& table, const std::vector<PgStore::AgentResult>& results,
              const std::vector<size_t>& indices, const std::map<std::string, JobOwner>& owners) {
  internal::CopyResultRows(txn, table, indices.size(), [&](size_t i) {
    const v1::CaseResult& result = *results[indices[i]].result;
    const JobOwner& owner = owners.at(result.job_id());
    return internal::ResultCopyFields(result, owner.run_id, owner.agent_id, owner.emulated, owner.run_created_at);
  });
}

// How InsertRows writes a batch.
enum class InsertPath {
  // COPY'd straight into case_results, nothing looked up: a stored id, or a stored
  // result of the same (job, case) (case_results_one_per_case, migration 0017), makes
  // the COPY fail with a unique violation (the caller then retries the batch with kStaged).
  // What PgStore::InsertResults uses while it has seen no replay lately.
  kCopy,
  // Ids already stored are looked up and skipped, the rest is COPY'd straight into
  // case_results: one pass over the rows. A concurrent writer storing one of the ids
  // meanwhile, or a stored result of the same (job, case), makes the COPY fail with a
  // unique violation (the caller then retries the batch with kStaged). A re-sent result has its first copy's run, so
  // its
  // run_created_at: it meets that copy in the same partition. What InsertResults uses
  // for a while after it met a replay (PgStore::kLookupAfterReplay).
  kDirect,
  // COPY into a per-session staging table (emptied at commit), then INSERT ... SELECT
  // ... ON CONFLICT DO NOTHING (the primary key, and one result per (job, case) whatever
  // the attempt): idempotent under any concurrency, but every row is written twice.
  kStaged,
};

// Inserts rows `indices` of `results` (already checked: valid ids, this agent's
// jobs); returns the ids stored now (lower case).
std::set<std::string> InsertRows(pqxx::work& txn, const std::vector<PgStore::AgentResult>& results,
                                 const std::vector<size_t>& indices, const std::map<std::string, JobOwner>& owners,
                                 InsertPath path) {
  std::set<std::string> stored;
  if (path == InsertPath::kStaged) {
    txn.exec("SET LOCAL client_min_messages = warning");
    txn.exec(
        "CREATE TEMP TABLE IF NOT EXISTS fm_stage_results (LIKE case_results INCLUDING DEFAULTS) "
        "ON COMMIT DELETE ROWS");
    CopyRows(txn, "fm_stage_results", results, indices, owners);
    for (const auto& row : txn.exec("INSERT INTO case_results SELECT * FROM fm_stage_results "
                                    "ORDER BY result_id ON CONFLICT DO NOTHING "
                                    "RETURNING result_id::text")) {
      stored.insert(row[0].as<std::string>());
    }
    return stored;
  }
  // First occurrence of each id in the batch, unless already stored; in id order, so
  // that batches sharing ids wait for each other in one order (no deadlock).
  std::map<std::string, size_t> first;
  for (size_t index : indices) first.emplace(absl::AsciiStrToLower(results[index].result->result_id()), index);
  if (path == InsertPath::kCopy) {
    std::vector<size_t> fresh;
    for (const auto& [id, index] : first) {
      fresh.push_back(index);
      stored.insert(id);
    }
    CopyRows(txn, "case_results", results, fresh, owners);
    return stored;
  }
  // A stored copy of a result is in its run's partition: look ids up per run creation
  // time (a batch usually holds one or two runs).
  std::map<std::string, std::vector<std::string>> ids_by_created_at;
  for (const auto& [id, index] : first) {
    ids_by_created_at[owners.at(results[index].result->job_id()).run_created_at].push_back(id);
  }
  std::set<std::string> existing;
  for (const auto& [created_at, ids] : ids_by_created_at) {
    for (const auto& row : txn.exec_prepared("fm_existing_results", internal::UuidArray(ids), created_at)) {
      existing.insert(row[0].as<std::string>());
    }
  }
  std::vector<size_t> fresh;
  for (const auto& [id, index] : first) {
    if (existing.count(id) > 0) continue;
    fresh.push_back(index);
    stored.insert(id);
  }
  if (!fresh.empty()) CopyRows(txn, "case_results", results, fresh, owners);
  return stored;
}

// The case ids of `run_ids` (distinct), from `cache` or else read in `txn` (and cached).
absl::flat_hash_map<std::string, RunCaseIds::CaseIds> CaseIdsOfRuns(pqxx::work& txn, RunCaseIds& cache,
                                                                    const std::vector<std::string>& run_ids) {
  std::vector<std::string> missing;
  absl::flat_hash_map<std::string, RunCaseIds::CaseIds> found = cache.Find(run_ids, &missing);
  if (missing.empty()) return found;
  // One row per case id; a run without case ids comes back as one row with NULL.
  absl::flat_hash_map<std::string, std::shared_ptr<absl::flat_hash_set<std::string>>> read;
  for (const auto& row : txn.exec_prepared("fm_run_case_ids", internal::UuidArray(missing))) {
    auto& ids = read[row[0].as<std::string>()];
    if (row[1].is_null()) continue;
    if (ids == nullptr) ids = std::make_shared<absl::flat_hash_set<std::string>>();
    ids->insert(row[1].as<std::string>());
  }
  for (auto& [run_id, ids] : read) {
    RunCaseIds::CaseIds frozen = std::move(ids);
    cache.Put(run_id, frozen);
    found.emplace(run_id, std::move(frozen));
  }
  return found;
}

// Rejects the results among `rows` whose case id is not one of their run's (a case the
// job's plan does not have), and removes them from `rows`. The runs' case ids come from
// `cache` (read once per run): no per-row work in PostgreSQL.
void RejectUnknownCases(pqxx::work& txn, RunCaseIds& cache, const std::vector<PgStore::AgentResult>& results,
                        const std::map<std::string, JobOwner>& owners, std::vector<size_t>& rows,
                        std::vector<ResultOutcome>& outcomes) {
  if (rows.empty()) return;
  std::set<std::string> distinct;
  for (size_t i : rows) distinct.insert(owners.at(results[i].result->job_id()).run_id);
  const absl::flat_hash_map<std::string, RunCaseIds::CaseIds> case_ids =
      CaseIdsOfRuns(txn, cache, std::vector<std::string>(distinct.begin(), distinct.end()));
  std::vector<size_t> kept;
  for (size_t i : rows) {
    const v1::CaseResult& result = *results[i].result;
    const std::string& run_id = owners.at(result.job_id()).run_id;
    auto it = case_ids.find(run_id);
    if (it == case_ids.end() || it->second == nullptr || it->second->contains(result.spec().case_id())) {
      kept.push_back(i);
      continue;
    }
    ResultOutcome& outcome = outcomes[i];
    outcome.rejected = true;
    outcome.message = absl::StrCat("result.spec.case_id: \"", result.spec().case_id().substr(0, 200),
                                   "\" is not a case of job ", absl::AsciiStrToLower(result.job_id()), "'s plan");
  }
  rows = std::move(kept);
}

}  // namespace

absl::StatusOr<std::vector<ResultOutcome>> PgStore::InsertResults(const std::vector<AgentResult>& results) {
  std::vector<ResultOutcome> checked(results.size());
  std::vector<std::string> job_ids;
  for (size_t i = 0; i < results.size(); ++i) {
    const v1::CaseResult& r = *results[i].result;
    checked[i].result_id = r.result_id();
    absl::Status s = internal::CheckIncomingResult(r, /*job_id_too=*/true);
    if (!s.ok()) {
      checked[i].rejected = true;
      checked[i].message = std::string(s.message());
    } else {
      job_ids.push_back(absl::AsciiStrToLower(r.job_id()));
    }
  }
  if (job_ids.empty()) return checked;
  auto insert = [&](pqxx::work& txn, InsertPath path) {
    std::vector<ResultOutcome> outcomes = checked;
    std::map<std::string, JobOwner> owners;
    for (const auto& row : txn.exec_prepared("fm_jobs_owner", internal::UuidArray(job_ids))) {
      owners[row[0].as<std::string>()] = {row[1].as<std::string>(), row[2].as<std::string>(), row[3].as<bool>(),
                                          row[4].as<std::string>()};
    }
    std::vector<size_t> rows;
    for (size_t i = 0; i < results.size(); ++i) {
      if (outcomes[i].rejected) continue;
      const v1::CaseResult& r = *results[i].result;
      auto owner = owners.find(absl::AsciiStrToLower(r.job_id()));
      if (owner == owners.end() || owner->second.agent_id != results[i].agent_id) {
        outcomes[i].rejected = true;
        outcomes[i].message = absl::StrCat("result.job_id: job ", r.job_id(), " is not a job of this agent");
        continue;
      }
      rows.push_back(i);
    }
    // Job ids in `owners` are lower case; key the results' lookup the same way.
    std::map<std::string, JobOwner> by_given_id;
    for (size_t i : rows) {
      const std::string& given = results[i].result->job_id();
      by_given_id[given] = owners[absl::AsciiStrToLower(given)];
    }
    RejectUnknownCases(txn, run_case_ids_, results, by_given_id, rows, outcomes);
    std::set<std::string> stored;
    if (!rows.empty()) stored = InsertRows(txn, results, rows, by_given_id, path);
    std::set<std::string> seen;
    for (size_t i : rows) {
      const std::string id = absl::AsciiStrToLower(results[i].result->result_id());
      // The first occurrence of an id in the batch is the stored one.
      if (stored.count(id) > 0 && seen.insert(id).second) {
        outcomes[i].stored = true;
      } else {
        outcomes[i].duplicate = true;
      }
    }
    return outcomes;
  };
  // Replays come in bursts (an agent's spool after a reconnect): while this store has
  // seen one lately, ids are looked up before the COPY; otherwise the batch is COPY'd
  // as it is and the primary key finds a replay (the batch is then written again,
  // staged).
  const int64_t now_ns = absl::ToUnixNanos(SteadyNow());  // a window of steady time
  const InsertPath first_path =
      now_ns < lookup_until_unix_ns_.load(std::memory_order_relaxed) ? InsertPath::kDirect : InsertPath::kCopy;
  absl::StatusOr<std::vector<ResultOutcome>> inserted =
      InTransaction(*pool_, "insert results", [&](pqxx::work& txn) { return insert(txn, first_path); });
  // AlreadyExists: the COPY met a stored id (a replay, or another writer storing one of
  // the ids between the lookup and the COPY); nothing was committed.
  bool replayed = absl::IsAlreadyExists(inserted.status());
  if (replayed) {
    inserted =
        InTransaction(*pool_, "insert results", [&](pqxx::work& txn) { return insert(txn, InsertPath::kStaged); });
  }
  if (inserted.ok()) {
    for (const ResultOutcome& outcome : *inserted) replayed = replayed || outcome.duplicate;
  }
  if (replayed) {
    lookup_until_unix_ns_.store(now_ns + absl::ToInt64Nanoseconds(kLookupAfterReplay), std::memory_order_relaxed);
  }
  return inserted;
}

namespace {

// ListExportResults in `txn`.
absl::StatusOr<ResultExportIndex> ExportIndexInTxn(pqxx::work& txn, const std::string& run_id,
                                                   const std::string& agent_name) {
  std::optional<v1::RunInfo> run = internal::LoadRun(txn, run_id);
  if (!run) return absl::NotFoundError(absl::StrCat("run ", run_id, " not found"));
  ResultExportIndex index;
  index.run = *std::move(run);
  pqxx::result hosts = txn.exec_params(
      "SELECT DISTINCT a.name, a.host FROM jobs j JOIN agents a ON a.agent_id = j.agent_id "
      "WHERE j.run_id = $1::uuid AND ($2 = '' OR a.name = $2)",
      run_id, agent_name);
  if (hosts.empty() && !agent_name.empty()) {
    return absl::NotFoundError(absl::StrCat("agent \"", agent_name, "\" has no job in run ", run_id));
  }
  for (const auto& row : hosts) internal::ParseProtoField(row[1], &index.hosts[row[0].as<std::string>()]);
  // A job re-run after its agent was lost measures its cases again: export the newest
  // result of each case per job (all rows stay stored). octet_length reads the stored
  // size without the contents.
  pqxx::result r = txn.exec_params(
      "SELECT result_id::text, bytes, name, case_id FROM (SELECT DISTINCT ON (c.job_id, c.case_id) a.name, c.case_id,"
      "  c.result_id, octet_length(c.result) AS bytes"
      "  FROM case_results c JOIN agents a ON a.agent_id = c.agent_id"
      "  WHERE c.run_id = $1::uuid AND ($2 = '' OR a.name = $2)"
      "  ORDER BY c.job_id, c.case_id, c.finished_at DESC NULLS LAST, c.received_at DESC) latest "
      "ORDER BY name, case_id, result_id",
      run_id, agent_name);
  // By agent, then case id in natural order (a sweep's cpu_ns=20000 before cpu_ns=100000).
  std::vector<std::pair<std::pair<std::string, std::string>, size_t>> order;
  for (size_t i = 0; i < r.size(); ++i) order.push_back({{r[i][2].as<std::string>(), r[i][3].as<std::string>()}, i});
  std::stable_sort(order.begin(), order.end(), [](const auto& x, const auto& y) {
    if (x.first.first != y.first.first) return x.first.first < y.first.first;
    return NaturalLess(x.first.second, y.first.second);
  });
  index.results.reserve(r.size());
  for (const auto& [key, i] : order) index.results.push_back({r[i][0].as<std::string>(), r[i][1].as<size_t>()});
  return index;
}

// LoadResults in `txn`; the ids are checked UUIDs.
absl::StatusOr<std::vector<v1::CaseResult>> LoadResultsInTxn(pqxx::work& txn,
                                                             const std::vector<std::string>& result_ids) {
  std::vector<v1::CaseResult> results(result_ids.size());
  if (result_ids.empty()) return results;
  std::map<std::string, std::vector<size_t>> slots;  // lower-case id -> positions
  std::vector<std::string> ids;
  for (size_t i = 0; i < result_ids.size(); ++i) {
    auto [it, inserted] = slots.try_emplace(absl::AsciiStrToLower(result_ids[i]));
    if (inserted) ids.push_back(it->first);
    it->second.push_back(i);
  }
  pqxx::result r =
      txn.exec_params("SELECT result_id::text, result, emulated FROM case_results WHERE result_id = ANY($1::uuid[])",
                      internal::UuidArray(ids));
  std::set<std::string> found;
  for (const auto& row : r) {
    const std::string id = row[0].as<std::string>();
    auto it = slots.find(id);
    if (it == slots.end()) continue;
    found.insert(id);
    internal::ParseProtoField(row[1], &results[it->second.front()]);
    // Measured under emulation is the coordinator's record, not the agent's claim.
    results[it->second.front()].set_emulated(row[2].as<bool>());
    for (size_t k = 1; k < it->second.size(); ++k) results[it->second[k]] = results[it->second.front()];
  }
  for (const std::string& id : ids) {
    if (found.count(id) == 0) return absl::NotFoundError(absl::StrCat("result ", id, " not found"));
  }
  return results;
}

}  // namespace

absl::StatusOr<v1::ExportResultsResponse> PgStore::ExportResults(const std::string& run_id,
                                                                 const std::string& agent_name) {
  FLEETMARK_RETURN_IF_ERROR(internal::CheckUuid("run_id", run_id));
  return InTransactionOr(*pool_, "export results", [&](pqxx::work& txn) -> absl::StatusOr<v1::ExportResultsResponse> {
    FLEETMARK_ASSIGN_OR_RETURN(ResultExportIndex index, ExportIndexInTxn(txn, run_id, agent_name));
    std::vector<std::string> ids;
    ids.reserve(index.results.size());
    for (const ResultExportIndex::Entry& entry : index.results) ids.push_back(entry.result_id);
    FLEETMARK_ASSIGN_OR_RETURN(std::vector<v1::CaseResult> results, LoadResultsInTxn(txn, ids));
    v1::ExportResultsResponse response;
    *response.mutable_run() = std::move(index.run);
    for (auto& [name, host] : index.hosts) (*response.mutable_hosts())[name] = std::move(host);
    response.mutable_results()->Reserve(static_cast<int>(results.size()));
    for (v1::CaseResult& result : results) *response.add_results() = std::move(result);
    return response;
  });
}

absl::StatusOr<ResultExportIndex> PgStore::ListExportResults(const std::string& run_id, const std::string& agent_name) {
  FLEETMARK_RETURN_IF_ERROR(internal::CheckUuid("run_id", run_id));
  return InTransactionOr(*pool_, "export results",
                         [&](pqxx::work& txn) { return ExportIndexInTxn(txn, run_id, agent_name); });
}

absl::StatusOr<std::vector<v1::CaseResult>> PgStore::LoadResults(const std::vector<std::string>& result_ids) {
  for (size_t i = 0; i < result_ids.size(); ++i) {
    FLEETMARK_RETURN_IF_ERROR(internal::CheckUuid(absl::StrCat("result_ids[", i, "]"), result_ids[i]));
  }
  return InTransactionOr(*pool_, "load results", [&](pqxx::work& txn) { return LoadResultsInTxn(txn, result_ids); });
}

}  // namespace fleetmark::store
