// The run helpers of store_runs.h, and PgStore::ResolveRunId (run id prefixes).
#include "coordinator/store/store_runs.h"

#include "coordinator/store/pg_store.h"

#include <algorithm>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "coordinator/store/store_internal.h"
#include "engine/common/status_macros.h"
#include "google/protobuf/text_format.h"

namespace fleetmark::store::internal {

std::string InsertPlan(pqxx::work& txn, const v1::Plan& plan) {
  std::string text;
  google::protobuf::TextFormat::PrintToString(plan, &text);
  pqxx::result r = txn.exec_params(
      "INSERT INTO plans (plan_id, name, plan, plan_text) VALUES (gen_random_uuid(), $1, $2, $3) "
      "RETURNING plan_id::text",
      plan.name(), ProtoParam(plan), text);
  return r[0][0].as<std::string>();
}

absl::Status ValidateNewRun(const NewRun& run) {
  if (run.agent_ids.empty()) return absl::InvalidArgumentError("run: no agent selected");
  if (run.max_attempts < 1 || run.max_attempts > 100) {
    return absl::InvalidArgumentError(
        absl::StrCat("run.max_attempts: 1 <= max_attempts <= 100, got ", run.max_attempts));
  }
  for (const std::string& id : run.agent_ids) {
    absl::Status status = CheckUuid("run.agent_ids[]", id);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

v1::RunInfo CreateRunInTxn(pqxx::work& txn, const NewRun& run) { return InsertRun(txn, run).info; }

InsertedRun InsertRun(pqxx::work& txn, const NewRun& run, const std::vector<std::string>& assign_to,
                      absl::Duration lease, const std::string& coordinator_id) {
  const std::string plan_id = InsertPlan(txn, run.plan);
  pqxx::result r = txn.exec_params(
      "INSERT INTO runs (run_id, plan_id, plan_name, selector, quick, filter, submitted_by, case_ids) "
      "VALUES (gen_random_uuid(), $1::uuid, $2, $3, $4, $5, $6, NULLIF($7::text[], '{}')) "
      "RETURNING run_id::text, status, " +
          UnixNs("created_at"),
      plan_id, run.plan.name(), run.selector, run.quick, run.filter, run.submitted_by, TextArray(run.case_ids));
  const std::string run_id = r[0][0].as<std::string>();
  InsertedRun inserted;
  inserted.run_id = run_id;
  v1::RunInfo& info = inserted.info;
  info.set_run_id(run_id);
  info.set_plan_name(run.plan.name());
  info.set_status(r[0][1].as<std::string>());
  info.set_selector(run.selector);
  info.set_submitted_by(run.submitted_by);
  info.set_created_unix_ns(r[0][2].as<int64_t>());
  info.set_quick(run.quick);
  // One insert: jobs of idle agents start assigned, the others queued; the rows come
  // back with their agents' names for the RunInfo.
  pqxx::result jobs = txn.exec_params(
      // The idle agents are a hash join, not `a = ANY($5)` per row: that compared every
      // agent with every idle one (10^6 uuid comparisons, ~15-20 ms of a 1 000-agent fan-out).
      "WITH idle AS (SELECT DISTINCT i AS agent_id FROM unnest($5::uuid[]) AS i), "
      "t AS (SELECT a.agent_id, (idle.agent_id IS NOT NULL AND NOT EXISTS ("
      "    SELECT 1 FROM jobs b WHERE b.agent_id = a.agent_id AND b.status IN ('assigned', 'running'))) AS now"
      "  FROM unnest($2::uuid[]) AS a(agent_id) LEFT JOIN idle ON idle.agent_id = a.agent_id), "
      "i AS (INSERT INTO jobs (job_id, run_id, agent_id, max_attempts, cases_total, status, attempts,"
      "                  lease_expires_at, coordinator_id, expires_at) "
      "SELECT gen_random_uuid(), $1::uuid, t.agent_id, $3, $4,"
      "  CASE WHEN t.now THEN 'assigned' ELSE 'queued' END, CASE WHEN t.now THEN 1 ELSE 0 END,"
      "  CASE WHEN t.now THEN now() + $6::interval END, CASE WHEN t.now THEN $7 ELSE '' END,"
      "  now() + NULLIF($8::interval, '0 seconds') FROM t "
      "RETURNING job_id, agent_id, status, attempts, cases_total) "
      "SELECT i.job_id::text, i.agent_id::text, i.status, a.name, i.attempts, i.cases_total "
      "FROM i JOIN agents a ON a.agent_id = i.agent_id ORDER BY a.name",
      run_id, UuidArray(run.agent_ids), static_cast<int64_t>(run.max_attempts), static_cast<int64_t>(run.cases_total),
      UuidArray(assign_to), IntervalParam(lease), coordinator_id, IntervalParam(run.queue_expiry));
  Notification queued{.kind = NotificationKind::kQueued};
  for (const auto& row : jobs) {
    if (row[2].as<std::string>() == kJobAssigned) {
      inserted.assigned.emplace_back(row[0].as<std::string>(), row[1].as<std::string>());
    } else {
      queued.agent_ids.push_back(row[1].as<std::string>());
    }
    v1::JobInfo* job = info.add_jobs();
    job->set_job_id(row[0].as<std::string>());
    job->set_agent_name(row[3].as<std::string>());
    job->set_status(row[2].as<std::string>());
    job->set_attempts(row[4].as<uint32_t>());
    job->set_cases_total(row[5].as<uint32_t>());
  }
  if (!inserted.assigned.empty()) {
    txn.exec_params("UPDATE runs SET status = 'running' WHERE run_id = $1::uuid", run_id);
    info.set_status("running");
  }
  // The coordinators holding the agents of the queued jobs claim them on commit.
  Notify(txn, queued);
  return inserted;
}

std::string RunColumns() {
  return absl::StrCat("r.run_id::text, r.plan_name, r.status, r.selector, r.submitted_by, r.quick, ",
                      UnixNs("r.created_at"), ", coalesce(", UnixNs("r.finished_at"), ", 0), ",
                      ResultCountSql("r.run_id"), ", r.imported");
}

v1::RunInfo RunInfoFromRow(const pqxx::row& row) {
  v1::RunInfo info;
  info.set_run_id(row[0].as<std::string>());
  info.set_plan_name(row[1].as<std::string>());
  info.set_status(row[2].as<std::string>());
  info.set_selector(row[3].as<std::string>());
  info.set_submitted_by(row[4].as<std::string>());
  info.set_quick(row[5].as<bool>());
  info.set_created_unix_ns(row[6].as<int64_t>());
  info.set_finished_unix_ns(row[7].as<int64_t>());
  info.set_results(row[8].as<uint64_t>());
  info.set_imported(row[9].as<bool>());
  return info;
}

std::string JobColumns() {
  return "j.job_id::text, j.agent_id::text, a.name, j.status, j.message, j.attempts, j.cases_done, j.cases_total";
}

v1::JobInfo JobInfoFromRow(const pqxx::row& row, int at) {
  v1::JobInfo job;
  job.set_job_id(row[at].as<std::string>());
  job.set_agent_name(row[at + 2].as<std::string>());
  job.set_status(row[at + 3].as<std::string>());
  job.set_message(row[at + 4].is_null() ? "" : row[at + 4].as<std::string>());
  job.set_attempts(row[at + 5].as<uint32_t>());
  job.set_cases_done(row[at + 6].as<uint32_t>());
  job.set_cases_total(row[at + 7].as<uint32_t>());
  return job;
}

std::optional<v1::RunInfo> LoadRun(pqxx::work& txn, const std::string& run_id) {
  if (!IsUuid(run_id)) return std::nullopt;
  pqxx::result r =
      txn.exec_params(absl::StrCat("SELECT ", RunColumns(), " FROM runs r WHERE r.run_id = $1::uuid"), run_id);
  if (r.empty()) return std::nullopt;
  v1::RunInfo info = RunInfoFromRow(r[0]);
  pqxx::result jobs = txn.exec_params(absl::StrCat("SELECT ", JobColumns(),
                                                   " FROM jobs j JOIN agents a ON a.agent_id = j.agent_id "
                                                   "WHERE j.run_id = $1::uuid ORDER BY ",
                                                   kJobsOrder),
                                      run_id);
  for (const auto& row : jobs) *info.add_jobs() = JobInfoFromRow(row, 0);
  return info;
}

void RefreshRun(pqxx::work& txn, const std::string& run_id) {
  // Serialise refreshes of one run: otherwise two jobs finishing at once each see the
  // other still running (READ COMMITTED snapshots) and the run stays 'running' forever.
  txn.exec_params("SELECT 1 FROM runs WHERE run_id = $1::uuid FOR UPDATE", run_id);
  txn.exec_prepared("fm_refresh_run", run_id);
}

}  // namespace fleetmark::store::internal

namespace fleetmark::store {
namespace {

// The canonical text form of a UUID: '-' at these offsets, hex digits elsewhere.
constexpr char kUuidZero[] = "00000000-0000-0000-0000-000000000000";
constexpr char kUuidMax[] = "ffffffff-ffff-ffff-ffff-ffffffffffff";
constexpr int kMinRunIdPrefixDigits = 6;

absl::Status BadRunIdPrefix(const std::string& given, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat("run_id: a run id (UUID) or a unique prefix of it with at least ",
                                                 kMinRunIdPrefixDigits, " hex digits (0-9, a-f), got \"",
                                                 given.substr(0, 64), "\" (", why, ")"));
}

}  // namespace

namespace internal {

absl::StatusOr<std::pair<std::string, std::string>> RunIdRange(const std::string& id_or_prefix) {
  const std::string prefix = absl::AsciiStrToLower(id_or_prefix);
  if (internal::IsUuid(prefix)) return std::make_pair(prefix, prefix);
  if (prefix.size() > sizeof(kUuidZero) - 1) return BadRunIdPrefix(id_or_prefix, "too long");
  int digits = 0;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (kUuidZero[i] == '-') {
      if (prefix[i] != '-') return BadRunIdPrefix(id_or_prefix, absl::StrCat("expected '-' at offset ", i));
    } else if (absl::ascii_isxdigit(static_cast<unsigned char>(prefix[i]))) {
      ++digits;
    } else {
      return BadRunIdPrefix(id_or_prefix, absl::StrCat("not a hex digit at offset ", i));
    }
  }
  if (digits < kMinRunIdPrefixDigits) {
    return BadRunIdPrefix(id_or_prefix, absl::StrCat(digits, " hex digits"));
  }
  return std::make_pair(prefix + (kUuidZero + prefix.size()), prefix + (kUuidMax + prefix.size()));
}

absl::StatusOr<std::string> OneRunOf(const std::string& id_or_prefix, const std::vector<std::string>& ids) {
  if (ids.empty()) return absl::NotFoundError(absl::StrCat("no run with id prefix ", id_or_prefix));
  if (ids.size() > 1) {
    // A third row means there may be more: "..." only then.
    return absl::InvalidArgumentError(absl::StrCat("run id prefix ", id_or_prefix, " is ambiguous (matches ", ids[0],
                                                   ", ", ids[1], ids.size() > 2 ? ", ..." : "",
                                                   "): give more characters"));
  }
  return ids[0];
}

absl::StatusOr<std::vector<std::string>> RunIdsWithPrefix(pqxx::transaction_base& txn, const std::string& id_or_prefix,
                                                          int limit) {
  // `run_id::text LIKE prefix || '%'` written as the range of UUIDs with that prefix, so
  // the primary key index answers it.
  FLEETMARK_ASSIGN_OR_RETURN(const auto range, RunIdRange(id_or_prefix));
  pqxx::result r = txn.exec_params(
      "SELECT run_id::text FROM runs WHERE run_id BETWEEN $1::uuid AND $2::uuid ORDER BY run_id LIMIT $3", range.first,
      range.second, std::max(1, limit));
  std::vector<std::string> ids;
  for (const pqxx::row& row : r) ids.push_back(row[0].as<std::string>());
  return ids;
}

absl::StatusOr<std::string> ResolveRunId(pqxx::transaction_base& txn, const std::string& id_or_prefix) {
  const std::string prefix = absl::AsciiStrToLower(id_or_prefix);
  if (internal::IsUuid(prefix)) {
    // A job's id names its run (`agents list` shows the job an agent runs); any other
    // UUID is itself (an unknown one is NotFound where it is used). One primary-key read.
    pqxx::result r = txn.exec_params(
        "SELECT j.run_id::text FROM jobs j WHERE j.job_id = $1::uuid"
        " AND NOT EXISTS (SELECT 1 FROM runs WHERE run_id = $1::uuid)",
        prefix);
    return r.empty() ? prefix : r[0][0].as<std::string>();
  }
  FLEETMARK_ASSIGN_OR_RETURN(const std::vector<std::string> ids, RunIdsWithPrefix(txn, id_or_prefix, 3));
  return OneRunOf(id_or_prefix, ids);
}

}  // namespace internal

absl::StatusOr<std::string> PgStore::ResolveRunId(const std::string& id_or_prefix) {
  return internal::InTransactionOr(*pool_, "resolve run id",
                                   [&](pqxx::work& txn) { return internal::ResolveRunId(txn, id_or_prefix); });
}

}  // namespace fleetmark::store
