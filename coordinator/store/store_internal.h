// Helpers shared by the store's implementation files (not part of the store's API).
#pragma once

#include <map>
#include <string>
#include <vector>
#include <string_view>
#include <utility>

#include <pqxx/pqxx>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "coordinator/store/change_records.h"
#include "coordinator/store/connection_pool.h"
#include "coordinator/store/notification.h"
#include "coordinator/store/store.h"
#include "fleetmark/v1/control.pb.h"
#include "google/protobuf/message.h"

namespace fleetmark::store::internal {

// True for the canonical 8-4-4-4-12 hex form.
bool IsUuid(std::string_view id);

// The rule of Store::ResolveRunId (a UUID, a job's id giving its run, or a unique
// prefix of at least 6 hex digits), read in `txn`; the web reader resolves the web API's run ids with it too.
absl::StatusOr<std::string> ResolveRunId(pqxx::transaction_base& txn, const std::string& id_or_prefix);

// ResolveRunId's rule without a database: the lowest and highest UUID `id_or_prefix`
// can name (both itself for a UUID; lower case), or InvalidArgument naming `run_id` for
// a malformed prefix. OneRunOf answers for the runs found in that range (in id order,
// up to 3): the one run, NotFound for none, InvalidArgument naming two for several.
absl::StatusOr<std::pair<std::string, std::string>> RunIdRange(const std::string& id_or_prefix);
absl::StatusOr<std::string> OneRunOf(const std::string& id_or_prefix, const std::vector<std::string>& ids);

// The ids of the runs `id_or_prefix` names by ResolveRunId's rule (checked the same
// way: InvalidArgument naming `run_id` for a malformed prefix), in id order, at most
// `limit` (>= 1); a UUID gives itself when that run exists. Empty when none matches.
absl::StatusOr<std::vector<std::string>> RunIdsWithPrefix(pqxx::transaction_base& txn, const std::string& id_or_prefix,
                                                          int limit);

// The newest attempt first among a (job, case)'s results: the same order as
// Store::ExportResults, plus the result id so ties are deterministic.
#define FLEETMARK_NEWEST_ATTEMPT "c.finished_at DESC NULLS LAST, c.received_at DESC, c.result_id DESC"
inline constexpr char kNewestAttempt[] = FLEETMARK_NEWEST_ATTEMPT;
// ORDER BY of a DISTINCT ON (c.job_id, c.case_id) keeping each case's newest attempt.
inline constexpr char kNewestPerJobCase[] = "c.job_id, c.case_id, " FLEETMARK_NEWEST_ATTEMPT;
#undef FLEETMARK_NEWEST_ATTEMPT

// SQL condition on runs `r`: submitted by a schedule (a nightly run; History's
// nightly=1, the confirmed-change scan).
inline constexpr char kScheduledRun[] = "r.submitted_by LIKE 'schedule:%'";

// CreateSchedule's and SeedDefaultSchedule's checks: InvalidArgument naming
// `schedule.name` (the agent name rule, at most 64 bytes) or `schedule.cron` (empty).
absl::Status CheckSchedule(const v1::Schedule& schedule);

// InvalidArgument naming `field` unless `id` is a UUID.
absl::Status CheckUuid(std::string_view field, std::string_view id);

// AgentsToDisconnect's argument checks (both stores): `session_ids` empty or one per
// agent; every agent id a UUID. InvalidArgument naming the field otherwise.
absl::Status CheckDisconnectArguments(const std::vector<std::string>& agent_ids,
                                      const std::vector<std::string>& session_ids);

// The jobs CreateRunAndClaim claimed at once: one assignment (a copy of the plan,
// attempt 1) per (job_id, agent_id) of `assigned`. Built after the commit (PgStore: not
// with the transaction's row locks still open).
std::vector<ClaimedJob> ClaimedJobsOfNewRun(const std::string& run_id, const NewRun& run,
                                            const std::vector<std::pair<std::string, std::string>>& assigned);

// Fills same_host_as of listed `agents` (scheduler/same_host.h's rule); removed agents
// neither count nor are counted.
void MarkAgentsOnOneHost(std::vector<v1::AgentInfo>& agents);

// SQL expression turning timestamptz column `column` into unix ns (bigint, µs precision).
std::string UnixNs(std::string_view column);

// absl::Time as a PostgreSQL timestamptz literal parameter (RFC 3339, UTC, µs).
std::string TimeParam(absl::Time t);

// SQL expression counting a run's results as RunInfo.results (CLI, web API): cases
// (job_id, case_id) with a real result, i.e. a row whose status is not 'cancelled'
// (the placeholders a cancelled job reports for its unmeasured cases do not count); a
// case measured again by a re-run job counts once. `run_id_column` names the run.
std::string ResultCountSql(std::string_view run_id_column);

// Interval parameter "<n> microseconds" for `d`.
std::string IntervalParam(absl::Duration d);

// Serialized proto as a bytea parameter / parsed back from a bytea field.
pqxx::binarystring ProtoParam(const google::protobuf::Message& message);
bool ParseProtoField(const pqxx::field& field, google::protobuf::Message* message);

// PostgreSQL array literal of UUIDs ('{a,b}'); the ids must be validated UUIDs.
std::string UuidArray(const std::vector<std::string>& ids);

// After `status` (from StatusFromPqxx) ended a transaction on `lease`: a connection
// that may be unusable (Unavailable, Internal) is closed instead of returned, and on a
// broken connection (Unavailable) the idle ones are dropped too, since a server
// restart breaks them all (the next call opens a fresh connection).
inline void DiscardIfBroken(ConnectionPool& pool, ConnectionPool::Lease& lease, const absl::Status& status) {
  if (absl::IsUnavailable(status) || absl::IsInternal(status)) lease.Discard();
  if (absl::IsUnavailable(status)) pool.DiscardIdle();
}

// Runs `fn(txn)` in a read-write transaction on a pooled connection and commits.
// Maps libpqxx exceptions with `context` (discarding the connection if it broke).
template <typename Fn>
auto InTransaction(ConnectionPool& pool, std::string_view context, Fn&& fn)
    -> absl::StatusOr<decltype(fn(std::declval<pqxx::work&>()))> {
  auto lease = pool.Acquire();
  if (!lease.ok()) return lease.status();
  try {
    pqxx::work txn(**lease);
    auto value = fn(txn);
    txn.commit();
    return value;
  } catch (const std::exception& e) {
    absl::Status status = StatusFromPqxx(e, context);
    DiscardIfBroken(pool, *lease, status);
    return status;
  }
}

// Same for functions returning absl::Status / absl::StatusOr<T>: an error returned by
// `fn` rolls the transaction back.
template <typename T>
struct Unwrap {
  using type = T;
};
template <typename T>
struct Unwrap<absl::StatusOr<T>> {
  using type = T;
};

template <typename Fn>
auto InTransactionOr(ConnectionPool& pool, std::string_view context, Fn&& fn)
    -> decltype(fn(std::declval<pqxx::work&>())) {
  using Result = decltype(fn(std::declval<pqxx::work&>()));
  auto lease = pool.Acquire();
  if (!lease.ok()) return Result(lease.status());
  try {
    pqxx::work txn(**lease);
    Result value = fn(txn);
    if (value.ok()) txn.commit();
    return value;
  } catch (const std::exception& e) {
    absl::Status status = StatusFromPqxx(e, context);
    DiscardIfBroken(pool, *lease, status);
    return Result(status);
  }
}

}  // namespace fleetmark::store::internal

namespace fleetmark::store::internal {

// PostgreSQL text[] literal with each element double-quoted and escaped.
std::string TextArray(const std::vector<std::string>& values);

// Sends `n` to every coordinator listening (kNotificationChannel) when `txn` commits
// (NOTIFY is transactional: nothing is sent on rollback). One statement for all its
// payloads; none when `n` names no agent.
void Notify(pqxx::work& txn, const Notification& n);

// JSON object text of a string map (for jsonb columns) and back.
std::string LabelsJson(const std::map<std::string, std::string>& labels);
std::map<std::string, std::string> ParseLabelsJson(const std::string& json);

// Confirmed changes (store_changes.cc): the columns of a change row (changes `ch` joined
// with agents `a`), the record of such a row, and the list query both the control
// service and the web view run.
std::string ChangeColumns();
ChangeRecord ChangeFromRow(const pqxx::row& row);
absl::StatusOr<std::vector<ChangeRecord>> QueryChanges(pqxx::transaction_base& txn, const ChangeFilter& filter);

}  // namespace fleetmark::store::internal
