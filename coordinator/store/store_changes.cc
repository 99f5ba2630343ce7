// Store: confirmed changes (change_records.h, migration 0012): scans of ended nightly
// runs, confirmation runs, verdicts and the list of changes.
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "coordinator/changes/confirmation.h"
#include "coordinator/store/pg_store.h"
#include "coordinator/store/store_internal.h"
#include "engine/common/text.h"
#include "coordinator/store/store_runs.h"
#include "engine/common/status_macros.h"

namespace fleetmark::store {

absl::StatusOr<ChangeFilter> ChangeFilterOf(int64_t since_unix_ns, const std::string& agent_name,
                                            const std::string& state, uint32_t limit) {
  if (!state.empty() && !changes::IsChangeState(state)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "state: one of suspected, confirmed, not_reproduced, unconfirmed, got \"", state.substr(0, 64), "\""));
  }
  if (limit > 10000) return absl::InvalidArgumentError(absl::StrCat("limit: 1..10000 (0 = 1000), got ", limit));
  ChangeFilter filter;
  if (since_unix_ns != 0) filter.since = absl::FromUnixNanos(since_unix_ns);
  filter.agent_name = agent_name;
  filter.state = state;
  filter.limit = limit == 0 ? 1000 : static_cast<int>(limit);
  return filter;
}

namespace internal {

std::string ChangeColumns() {
  return absl::StrCat(
      "ch.change_id, ch.agent_id::text, a.name, ch.case_id, ch.run_id::text, coalesce(ch.result_id::text, ''), "
      "ch.old_level_ns, ch.new_level_ns, ch.noise_percent, ch.min_change_percent, ch.state, ch.reason, "
      "coalesce(ch.confirmation_run_id::text, ''), ch.confirmation_median_ns, ",
      UnixNs("ch.created_at"), ", ", UnixNs("ch.decided_at"));
}

ChangeRecord ChangeFromRow(const pqxx::row& row) {
  ChangeRecord c;
  c.change_id = row[0].as<int64_t>();
  c.agent_id = row[1].as<std::string>();
  c.agent_name = row[2].as<std::string>();
  c.case_id = row[3].as<std::string>();
  c.run_id = row[4].as<std::string>();
  c.result_id = row[5].as<std::string>();
  c.old_level_ns = row[6].as<double>();
  c.new_level_ns = row[7].as<double>();
  if (!row[8].is_null()) c.noise_percent = row[8].as<double>();
  c.min_change_percent = row[9].as<double>();
  c.state = row[10].as<std::string>();
  c.reason = row[11].as<std::string>();
  c.confirmation_run_id = row[12].as<std::string>();
  if (!row[13].is_null()) c.confirmation_median_ns = row[13].as<double>();
  c.created_at = absl::FromUnixNanos(row[14].as<int64_t>());
  if (!row[15].is_null()) c.decided_at = absl::FromUnixNanos(row[15].as<int64_t>());
  return c;
}

absl::StatusOr<std::vector<ChangeRecord>> QueryChanges(pqxx::transaction_base& txn, const ChangeFilter& filter) {
  if (filter.limit < 1 || filter.limit > 10000) {
    return absl::InvalidArgumentError(absl::StrCat("limit: 1 <= limit <= 10000, got ", filter.limit));
  }
  // A name no agent ever had (a typo) is an error, not an empty list; a removed agent's
  // changes stay listed by its name.
  if (!filter.agent_name.empty() &&
      txn.exec_params("SELECT 1 FROM agents WHERE name = $1 LIMIT 1", filter.agent_name).empty()) {
    return absl::NotFoundError(absl::StrCat("agent: no agent named \"", EscapeForTerminal(filter.agent_name, 80),
                                            "\" (fleetmark agents list --all lists every agent)"));
  }
  pqxx::result r = txn.exec_params(
      absl::StrCat("SELECT ", ChangeColumns(),
                   " FROM changes ch JOIN agents a ON a.agent_id = ch.agent_id "
                   "WHERE ch.created_at >= $1::timestamptz AND ($2 = '' OR a.name = $2) AND ($3 = '' OR ch.state = $3) "
                   "ORDER BY ch.created_at DESC, ch.change_id DESC LIMIT $4"),
      filter.since == absl::InfinitePast() ? std::string("-infinity") : TimeParam(filter.since), filter.agent_name,
      filter.state, filter.limit);
  std::vector<ChangeRecord> out;
  for (const auto& row : r) out.push_back(ChangeFromRow(row));
  return out;
}

namespace {

// Nightly runs older than this are not scanned (a database from before migration 0012
// has its ended nightly runs marked scanned by the migration itself).
constexpr char kScanWindow[] = "7 days";
// Points per case series: History's default window.
constexpr int kSeriesPoints = 120;

ChangeScan LoadScan(pqxx::work& txn, const std::string& run_id, const std::string& agent_id) {
  ChangeScan scan;
  scan.run_id = run_id;
  scan.agent_id = agent_id;
  pqxx::result agent = txn.exec_params("SELECT name, noise_percent FROM agents WHERE agent_id = $1::uuid", agent_id);
  if (!agent.empty()) {
    scan.agent_name = agent[0][0].as<std::string>();
    if (!agent[0][1].is_null()) scan.noise = agent[0][1].as<double>() / 100;
  }
  const std::string calibration = absl::StrCat(absl::StrReplaceAll(kCalibrationLabelPrefix, {{"_", "\\_"}}), "%");
  pqxx::result points = txn.exec_params(
      absl::StrCat(
          "WITH cases AS (SELECT DISTINCT case_id FROM case_results WHERE run_id = $1::uuid AND agent_id = $2::uuid"
          "  AND status <> 'cancelled' AND strategy_label NOT LIKE $3), "
          "pts AS (SELECT DISTINCT ON (c.job_id, c.case_id) c.case_id, c.result_id::text AS result_id, c.status,"
          "  c.median_ns, coalesce(c.fingerprint_hash, '') AS hash, r.created_at, r.run_id"
          "  FROM case_results c JOIN runs r ON r.run_id = c.run_id"
          "  WHERE c.agent_id = $2::uuid AND c.case_id IN (SELECT case_id FROM cases) AND ",
          kScheduledRun,
          "    AND r.created_at <= (SELECT created_at FROM runs WHERE run_id = $1::uuid)"
          "  ORDER BY ",
          kNewestPerJobCase,
          ") "
          "SELECT case_id, result_id, status, median_ns, hash FROM ("
          "  SELECT *, row_number() OVER (PARTITION BY case_id ORDER BY created_at DESC, run_id DESC) AS n FROM pts) x "
          "WHERE n <= $4 ORDER BY case_id, created_at, run_id"),
      run_id, agent_id, calibration, kSeriesPoints);
  for (const auto& row : points) {
    const std::string case_id = row[0].as<std::string>();
    if (scan.series.empty() || scan.series.back().case_id != case_id) scan.series.push_back({case_id, {}, {}, ""});
    CaseSeries& s = scan.series.back();
    const bool ok = row[2].as<std::string>() == "ok" && !row[3].is_null();
    s.medians_ns.push_back(ok ? row[3].as<double>() : 0.0);
    s.fingerprint_hashes.push_back(row[4].as<std::string>());
    s.newest_result_id = row[1].as<std::string>();
  }
  return scan;
}

}  // namespace
}  // namespace internal

absl::StatusOr<std::vector<SuspectedChanges>> PgStore::ScanNightlyRuns(const ChangeDetector& detect, int max_scans) {
  using Pair = std::pair<std::string, std::string>;
  FLEETMARK_ASSIGN_OR_RETURN(
      std::vector<Pair> pending, internal::InTransaction(*pool_, "changes: nightly runs to scan", [&](pqxx::work& txn) {
        std::vector<Pair> out;
        pqxx::result r = txn.exec_params(
            absl::StrCat("SELECT j.run_id::text, j.agent_id::text FROM jobs j JOIN runs r ON r.run_id = j.run_id "
                         "WHERE ",
                         internal::kScheduledRun,
                         " AND r.status IN ('done', 'failed') AND j.status IN ('done', 'failed')"
                         " AND r.finished_at > now() - $2::interval"
                         " AND NOT EXISTS (SELECT 1 FROM change_scans s WHERE s.run_id = j.run_id"
                         "                 AND s.agent_id = j.agent_id) "
                         "ORDER BY r.created_at, j.agent_id LIMIT $1"),
            max_scans, std::string(internal::kScanWindow));
        for (const auto& row : r) out.emplace_back(row[0].as<std::string>(), row[1].as<std::string>());
        return out;
      }));
  std::vector<SuspectedChanges> found;
  for (const auto& [run_id, agent_id] : pending) {
    FLEETMARK_ASSIGN_OR_RETURN(
        std::optional<SuspectedChanges> scanned,
        internal::InTransaction(*pool_, "changes: scan", [&](pqxx::work& txn) -> std::optional<SuspectedChanges> {
          pqxx::result claimed = txn.exec_params(
              "INSERT INTO change_scans (run_id, agent_id) VALUES ($1::uuid, $2::uuid) ON CONFLICT DO NOTHING "
              "RETURNING 1",
              run_id, agent_id);
          if (claimed.empty()) return std::nullopt;  // another coordinator scans it
          const ChangeScan scan = internal::LoadScan(txn, run_id, agent_id);
          SuspectedChanges out{run_id, agent_id, scan.agent_name, {}, {}};
          for (const DetectedChange& d : detect(scan)) {
            std::string result_id;
            for (const CaseSeries& s : scan.series) {
              if (s.case_id == d.case_id) result_id = s.newest_result_id;
            }
            pqxx::result id = txn.exec_params(
                "INSERT INTO changes (agent_id, case_id, run_id, result_id, old_level_ns, new_level_ns,"
                " noise_percent, min_change_percent) "
                "VALUES ($1::uuid, $2, $3::uuid, NULLIF($4, '')::uuid, $5, $6, $7, $8) RETURNING change_id",
                agent_id, d.case_id, run_id, result_id, d.old_level_ns, d.new_level_ns,
                scan.noise > 0 ? std::optional<double>(100 * scan.noise) : std::nullopt, 100 * d.min_relative_change);
            out.change_ids.push_back(id[0][0].as<int64_t>());
            out.case_ids.push_back(d.case_id);
          }
          txn.exec_params("UPDATE change_scans SET changes = $3 WHERE run_id = $1::uuid AND agent_id = $2::uuid",
                          run_id, agent_id, static_cast<int64_t>(out.change_ids.size()));
          if (out.change_ids.empty()) return std::nullopt;
          return out;
        }));
    if (scanned) found.push_back(std::move(*scanned));
  }
  return found;
}

absl::StatusOr<std::string> PgStore::SubmitConfirmation(const SuspectedChanges& found, int budget_per_day,
                                                        const ConfirmationBuilder& build, v1::RunInfo* run) {
  const std::string ids = absl::StrCat("{", absl::StrJoin(found.change_ids, ","), "}");
  return internal::InTransactionOr(
      *pool_, "changes: confirmation run", [&](pqxx::work& txn) -> absl::StatusOr<std::string> {
        auto unconfirmed = [&](const std::string& reason) -> absl::StatusOr<std::string> {
          txn.exec_params(
              "UPDATE changes SET state = 'unconfirmed', reason = $2, decided_at = now() "
              "WHERE change_id = ANY($1::bigint[]) AND state = 'suspected'",
              ids, reason.substr(0, 4096));
          return reason;
        };
        pqxx::result agent = txn.exec_params(
            "SELECT name, removed_at IS NOT NULL, health, quarantine_reason,"
            " (state = 'online' AND last_seen > now() - $2::interval) FROM agents WHERE agent_id = $1::uuid FOR NO KEY "
            "UPDATE",
            found.agent_id, internal::IntervalParam(options_.online_window));
        if (agent.empty()) return unconfirmed("agent not found");
        const std::string name = agent[0][0].as<std::string>();
        if (agent[0][1].as<bool>()) return unconfirmed(absl::StrCat("agent ", name, " was removed"));
        if (agent[0][2].as<std::string>() == kHealthQuarantined) {
          return unconfirmed(absl::StrCat("agent ", name, " is quarantined (", agent[0][3].as<std::string>(), ")"));
        }
        if (!agent[0][4].as<bool>()) return unconfirmed(absl::StrCat("agent ", name, " is offline"));
        pqxx::result used = txn.exec_params(
            "SELECT count(DISTINCT ch.confirmation_run_id) FROM changes ch JOIN runs r ON r.run_id = "
            "ch.confirmation_run_id WHERE ch.agent_id = $1::uuid AND r.created_at > now() - interval '24 hours'",
            found.agent_id);
        if (used[0][0].as<int64_t>() >= budget_per_day) {
          return unconfirmed(absl::StrCat("over the confirmation budget (", budget_per_day, " per agent per day)"));
        }
        pqxx::result plan = txn.exec_params(
            "SELECT p.plan, r.quick FROM runs r JOIN plans p ON p.plan_id = r.plan_id WHERE r.run_id = $1::uuid",
            found.run_id);
        if (plan.empty()) return unconfirmed("the nightly run is gone");
        v1::Plan stored;
        internal::ParseProtoField(plan[0][0], &stored);
        absl::StatusOr<NewRun> built = build(stored, plan[0][1].as<bool>());
        if (!built.ok()) return unconfirmed(std::string(built.status().message()));
        *run = internal::CreateRunInTxn(txn, *built);
        txn.exec_params("UPDATE changes SET confirmation_run_id = $2::uuid WHERE change_id = ANY($1::bigint[])", ids,
                        run->run_id());
        return std::string();
      });
}

absl::StatusOr<std::vector<EndedConfirmation>> PgStore::EndedConfirmations(int limit) {
  return internal::InTransaction(*pool_, "changes: ended confirmations", [&](pqxx::work& txn) {
    std::vector<EndedConfirmation> out;
    pqxx::result r =
        txn.exec_params(absl::StrCat("SELECT ", internal::ChangeColumns(),
                                     ", r.status, coalesce(j.status, ''), coalesce(j.message, ''),"
                                     " (SELECT c.median_ns FROM case_results c WHERE c.run_id = ch.confirmation_run_id"
                                     "  AND c.agent_id = ch.agent_id AND c.case_id = ch.case_id AND c.status = 'ok'"
                                     "  ORDER BY c.finished_at DESC NULLS LAST, c.received_at DESC LIMIT 1) "
                                     "FROM changes ch JOIN agents a ON a.agent_id = ch.agent_id"
                                     " JOIN runs r ON r.run_id = ch.confirmation_run_id"
                                     " LEFT JOIN jobs j ON j.run_id = r.run_id AND j.agent_id = ch.agent_id "
                                     "WHERE ch.state = 'suspected' AND r.status IN ('done', 'failed', 'cancelled') "
                                     "ORDER BY ch.change_id LIMIT $1"),
                        limit);
    for (const auto& row : r) {
      EndedConfirmation& e = out.emplace_back();
      e.change = internal::ChangeFromRow(row);
      e.run_status = row[16].as<std::string>();
      e.job_status = row[17].as<std::string>();
      e.job_message = row[18].as<std::string>();
      if (!row[19].is_null()) e.median_ns = row[19].as<double>();
    }
    return out;
  });
}

absl::StatusOr<std::optional<ChangeRecord>> PgStore::DecideChange(int64_t change_id, const std::string& state,
                                                                  const std::string& reason,
                                                                  std::optional<double> median_ns) {
  return internal::InTransaction(*pool_, "changes: decide", [&](pqxx::work& txn) -> std::optional<ChangeRecord> {
    pqxx::result updated = txn.exec_params(
        "UPDATE changes SET state = $2, reason = $3, confirmation_median_ns = $4, decided_at = now() "
        "WHERE change_id = $1 AND state = 'suspected' RETURNING 1",
        change_id, state, reason.substr(0, 4096), median_ns);
    if (updated.empty()) return std::nullopt;
    pqxx::result r = txn.exec_params(absl::StrCat("SELECT ", internal::ChangeColumns(),
                                                  " FROM changes ch JOIN agents a ON a.agent_id = ch.agent_id "
                                                  "WHERE ch.change_id = $1"),
                                     change_id);
    return internal::ChangeFromRow(r[0]);
  });
}

absl::StatusOr<std::vector<ChangeRecord>> PgStore::ListChanges(const ChangeFilter& filter) {
  return internal::InTransactionOr(*pool_, "list changes",
                                   [&](pqxx::work& txn) { return internal::QueryChanges(txn, filter); });
}

}  // namespace fleetmark::store
