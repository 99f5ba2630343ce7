// PgStore's results retention: the monthly case_results partitions created ahead
// (EnsureResultPartitions), old ones dropped (PruneResults), and runs.exported_at
// (RecordRunExported), which prune checks. Migration 0014 defines the partitioning and
// fleetmark_ensure_result_partitions.
#include "coordinator/store/pg_store.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "coordinator/store/store_internal.h"
#include "engine/common/status_macros.h"

namespace fleetmark::store {
namespace {

// The key of the transaction-level advisory lock that fleetmark_ensure_result_partitions
// takes (migration 0014, "fm-parts"): prune takes it too, so creating and dropping
// partitions never interleave.
constexpr int64_t kPartitionLockKey = 7380605325024588915LL;

// At most this many run ids are named in a refusal (the count says how many there are).
constexpr size_t kNamedRuns = 20;

std::string NamedRuns(const std::vector<std::string>& run_ids) {
  std::vector<std::string> named(run_ids.begin(), run_ids.begin() + std::min(run_ids.size(), kNamedRuns));
  std::string text = absl::StrJoin(named, ", ");
  if (run_ids.size() > kNamedRuns) absl::StrAppend(&text, " and ", run_ids.size() - kNamedRuns, " more");
  return text;
}

// The partitions of case_results (not the DEFAULT one) whose range ends at or before
// `cutoff_sql` (an SQL expression), oldest first, with their bounds read from the
// catalog (pg_get_expr of relpartbound: FOR VALUES FROM ('...') TO ('...')).
std::vector<ResultPartition> PartitionsEndingBy(pqxx::work& txn, const std::string& cutoff) {
  pqxx::result r = txn.exec_params(
      "SELECT name, " + internal::UnixNs("lo") + ", " + internal::UnixNs("hi") +
          ", estimated_rows FROM ("
          "  SELECT c.relname AS name, c.reltuples::bigint AS estimated_rows,"
          "    substring(pg_get_expr(c.relpartbound, c.oid) FROM 'FROM \\(''([^'']+)''\\)')::timestamptz AS lo,"
          "    substring(pg_get_expr(c.relpartbound, c.oid) FROM 'TO \\(''([^'']+)''\\)')::timestamptz AS hi"
          "  FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
          "  WHERE i.inhparent = 'case_results'::regclass"
          "    AND pg_get_expr(c.relpartbound, c.oid) <> 'DEFAULT') p "
          "WHERE hi <= $1::timestamptz ORDER BY lo",
      cutoff);
  std::vector<ResultPartition> partitions;
  for (const auto& row : r) {
    ResultPartition p;
    p.name = row[0].as<std::string>();
    p.from = absl::FromUnixNanos(row[1].as<int64_t>());
    p.to = absl::FromUnixNanos(row[2].as<int64_t>());
    p.estimated_rows = row[3].as<int64_t>();
    partitions.push_back(std::move(p));
  }
  return partitions;
}

}  // namespace

absl::Status PgStore::RecordRunExported(const std::string& run_id) {
  FLEETMARK_RETURN_IF_ERROR(internal::CheckUuid("run_id", run_id));
  return internal::InTransactionOr(*pool_, "record export", [&](pqxx::work& txn) -> absl::Status {
    pqxx::result r = txn.exec_params("UPDATE runs SET exported_at = now() WHERE run_id = $1::uuid", run_id);
    if (r.affected_rows() == 0) return absl::NotFoundError(absl::StrCat("run ", run_id, " not found"));
    return absl::OkStatus();
  });
}

absl::StatusOr<int> PgStore::EnsureResultPartitions(int months_ahead) {
  if (months_ahead < 0 || months_ahead > 120) {
    return absl::InvalidArgumentError(
        absl::StrCat("partitions_ahead: 0 <= partitions_ahead <= 120 months, got ", months_ahead));
  }
  return internal::InTransaction(*pool_, "create result partitions", [&](pqxx::work& txn) {
    pqxx::result r = txn.exec_params(
        "SELECT fleetmark_ensure_result_partitions(now(), now() + make_interval(months => $1::integer))", months_ahead);
    return r[0][0].as<int>();
  });
}

absl::StatusOr<PruneOutcome> PgStore::PruneResults(const PruneOptions& options) {
  if (options.older_than <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("older_than: a duration > 0, got ", absl::FormatDuration(options.older_than)));
  }
  return internal::InTransactionOr(*pool_, "prune results", [&](pqxx::work& txn) -> absl::StatusOr<PruneOutcome> {
    txn.exec(absl::StrCat("SELECT pg_advisory_xact_lock(", kPartitionLockKey, ")"));
    PruneOutcome outcome;
    const std::string cutoff_param = internal::IntervalParam(options.older_than);
    pqxx::result now = txn.exec_params("SELECT " + internal::UnixNs("now() - $1::interval"), cutoff_param);
    outcome.cutoff = absl::FromUnixNanos(now[0][0].as<int64_t>());
    outcome.partitions = PartitionsEndingBy(txn, internal::TimeParam(outcome.cutoff));
    if (outcome.partitions.empty()) return outcome;
    std::vector<std::string> from, to;
    for (const ResultPartition& p : outcome.partitions) {
      from.push_back(internal::TimeParam(p.from));
      to.push_back(internal::TimeParam(p.to));
    }
    // The runs created in the partitions' ranges (runs_created), whether unfinished,
    // and whether never exported with results (probing case_results_run in the run's
    // own partition).
    pqxx::result runs = txn.exec_params(
        "SELECT r.run_id::text, r.status IN ('queued', 'running'),"
        "  r.exported_at IS NULL AND EXISTS (SELECT 1 FROM case_results c"
        "    WHERE c.run_id = r.run_id AND c.run_created_at = r.created_at) "
        "FROM runs r JOIN unnest($1::timestamptz[], $2::timestamptz[]) AS p(lo, hi)"
        "  ON r.created_at >= p.lo AND r.created_at < p.hi ORDER BY r.created_at, r.run_id",
        internal::TextArray(from), internal::TextArray(to));
    std::vector<std::string> unfinished, unexported;
    for (const auto& row : runs) {
      outcome.run_ids.push_back(row[0].as<std::string>());
      if (row[1].as<bool>()) unfinished.push_back(outcome.run_ids.back());
      if (row[2].as<bool>()) unexported.push_back(outcome.run_ids.back());
    }
    if (!unfinished.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat(unfinished.size(), " runs in the partitions to drop are still queued or running (cancel them ",
                       "or wait, then prune again): ", NamedRuns(unfinished)));
    }
    if (!unexported.empty() && !options.force) {
      return absl::FailedPreconditionError(
          absl::StrCat(unexported.size(), " runs in the partitions to drop were never exported (fleetmark export ",
                       "RUN records an export; --force prunes them anyway): ", NamedRuns(unexported)));
    }
    if (options.dry_run) return outcome;
    for (const ResultPartition& p : outcome.partitions) txn.exec("DROP TABLE " + txn.quote_name(p.name));
    if (!outcome.run_ids.empty()) {
      const std::string ids = internal::UuidArray(outcome.run_ids);
      // Rows stored while their month had no partition yet, and not moved since.
      txn.exec_params("DELETE FROM case_results_default WHERE run_id = ANY($1::uuid[])", ids);
      txn.exec_params("DELETE FROM runs WHERE run_id = ANY($1::uuid[])", ids);  // jobs cascade
    }
    return outcome;
  });
}

}  // namespace fleetmark::store
