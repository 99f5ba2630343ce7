// Store: fleet health (noise score, quarantine, release) of agents.
#include "coordinator/store/store_health.h"

#include <map>
#include <optional>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "coordinator/store/pg_store.h"
#include "coordinator/store/store_internal.h"
#include "engine/common/text.h"

namespace fleetmark::store {
namespace internal {
namespace {

// LIKE pattern of calibration strategy labels ('_' escaped).
std::string CalibrationLike() {
  return absl::StrCat(absl::StrReplaceAll(kCalibrationLabelPrefix, {{"_", "\\_"}}), "%");
}

// The agent's newest `limit` nights (runs with an ok calibration result of its, created
// after its last release, measured under the device fingerprint of its newest calibration
// result), oldest first; per case the newest attempt's median. A fingerprint change (a
// kernel or OS update, another governor, a new engine build) starts the history over, as
// it starts a new segment on the History page: an update is not a drift of the device.
std::vector<CalibrationNight> LoadCalibrationNights(pqxx::work& txn, const std::string& agent_id, int limit) {
  pqxx::result r = txn.exec_params(
      "WITH since AS (SELECT coalesce((SELECT released_at FROM agents WHERE agent_id = $1::uuid), '-infinity') AS t), "
      "current AS ("
      "  SELECT c.fingerprint_hash FROM case_results c JOIN runs r ON r.run_id = c.run_id"
      "  WHERE c.agent_id = $1::uuid AND c.strategy_label LIKE $2 AND c.status = 'ok' AND c.median_ns > 0"
      "    AND r.created_at > (SELECT t FROM since)"
      "  ORDER BY r.created_at DESC, c.received_at DESC LIMIT 1), "
      "calibration AS ("
      "  SELECT c.* FROM case_results c"
      "  WHERE c.agent_id = $1::uuid AND c.strategy_label LIKE $2 AND c.status = 'ok' AND c.median_ns > 0"
      "    AND c.fingerprint_hash IS NOT DISTINCT FROM (SELECT fingerprint_hash FROM current)), "
      "nights AS ("
      "  SELECT r.run_id, r.created_at FROM runs r"
      "  WHERE r.run_id IN (SELECT j.run_id FROM jobs j WHERE j.agent_id = $1::uuid)"
      "    AND r.created_at > (SELECT t FROM since)"
      "    AND EXISTS (SELECT 1 FROM calibration c WHERE c.run_id = r.run_id)"
      "  ORDER BY r.created_at DESC LIMIT $3) "
      "SELECT DISTINCT ON (n.created_at, n.run_id, c.case_id) n.run_id::text, c.case_id, c.median_ns "
      "FROM nights n JOIN calibration c ON c.run_id = n.run_id "
      "ORDER BY n.created_at, n.run_id, c.case_id, c.finished_at DESC NULLS LAST, c.received_at DESC",
      agent_id, CalibrationLike(), limit);
  std::vector<CalibrationNight> nights;
  for (const auto& row : r) {
    const std::string run_id = row[0].as<std::string>();
    if (nights.empty() || nights.back().run_id != run_id) nights.push_back({run_id, {}});
    nights.back().median_ns[row[1].as<std::string>()] = row[2].as<double>();
  }
  return nights;
}

}  // namespace

void UpdateAgentsHealth(pqxx::work& txn, const std::vector<EndedJob>& ended, const HealthOptions& options) {
  // Each agent at most once: an agent has one live job (index jobs_one_active_per_agent),
  // and `ended` holds the jobs that were live until now.
  std::vector<const EndedJob*> round;
  for (const EndedJob& e : ended) {
    if (!e.outcome->cancelled) round.push_back(&e);  // a cancel says nothing about the device
  }
  if (round.empty()) return;
  std::vector<std::string> agents;
  std::vector<std::string> deferred;
  for (const EndedJob* e : round) {
    agents.push_back(e->agent_id);
    deferred.push_back(e->outcome->deferred ? "t" : "f");
  }
  pqxx::result rows =
      txn.exec_prepared("fm_agents_job_end", UuidArray(agents), absl::StrCat("{", absl::StrJoin(deferred, ","), "}"));
  struct AgentNow {
    bool quarantined = false;
    int deferred_in_a_row = 0;
    std::string reason;  // a rule's quarantine reason after this job end, "" = none
  };
  std::map<std::string, AgentNow> now;  // agents whose row exists (removed agents: none)
  for (const auto& row : rows) {
    now[row[0].as<std::string>()] = {row[1].as<std::string>() == kHealthQuarantined, row[2].as<int>(), ""};
  }
  std::vector<std::string> ran_jobs, ran_agents, ran_runs;
  for (const EndedJob* e : round) {
    auto it = now.find(e->agent_id);
    if (it == now.end()) continue;
    if (e->outcome->deferred) {
      it->second.reason = DeferredQuarantineReason(it->second.deferred_in_a_row, options, e->outcome->message);
    } else {
      ran_jobs.push_back(e->job_id);
      ran_agents.push_back(e->agent_id);
      ran_runs.push_back(e->run_id);
    }
  }
  if (!ran_jobs.empty()) {
    pqxx::result calibrated = txn.exec_prepared("fm_calibrated_jobs", UuidArray(ran_jobs), UuidArray(ran_agents),
                                                UuidArray(ran_runs), CalibrationLike());
    std::set<std::string> calibrated_jobs;
    for (const auto& row : calibrated) calibrated_jobs.insert(row[0].as<std::string>());
    for (size_t i = 0; i < ran_jobs.size(); ++i) {
      if (!calibrated_jobs.contains(ran_jobs[i])) continue;
      const HealthVerdict verdict =
          EvaluateCalibration(LoadCalibrationNights(txn, ran_agents[i], options.noise_nights), options);
      txn.exec_params("UPDATE agents SET noise_percent = $2, noise_nights = $3 WHERE agent_id = $1::uuid",
                      ran_agents[i], verdict.noise ? std::optional<double>(100 * *verdict.noise) : std::nullopt,
                      verdict.nights);
      now[ran_agents[i]].reason = verdict.quarantine_reason;
    }
  }
  for (const auto& [agent_id, agent] : now) {
    if (agent.reason.empty() || agent.quarantined) continue;
    txn.exec_params(
        "UPDATE agents SET health = 'quarantined', quarantine_reason = $2, quarantined_at = now() "
        "WHERE agent_id = $1::uuid",
        agent_id, StorableText(agent.reason, 4096));
  }
}

}  // namespace internal

absl::StatusOr<ReleasedAgent> PgStore::ReleaseAgent(const std::string& name) {
  return internal::InTransactionOr(
      *pool_, absl::StrCat("release agent ", name), [&](pqxx::work& txn) -> absl::StatusOr<ReleasedAgent> {
        pqxx::result r =
            txn.exec_params("SELECT agent_id::text, health, quarantine_reason, " + internal::UnixNs("quarantined_at") +
                                " FROM agents WHERE name = $1 AND removed_at IS NULL FOR NO KEY UPDATE",
                            name);
        if (r.empty()) {
          return absl::NotFoundError(
              absl::StrCat("agent \"", name, "\" not found (`fleetmark agents list` lists the agents)"));
        }
        if (r[0][1].as<std::string>() != kHealthQuarantined) {
          return absl::FailedPreconditionError(absl::StrCat("agent \"", name, "\" is not quarantined"));
        }
        ReleasedAgent released;
        released.agent_id = r[0][0].as<std::string>();
        released.reason = r[0][2].as<std::string>();
        released.quarantined_at = absl::FromUnixNanos(r[0][3].is_null() ? 0 : r[0][3].as<int64_t>());
        txn.exec_params(
            "UPDATE agents SET health = 'ok', quarantine_reason = '', quarantined_at = NULL, released_at = now(),"
            " deferred_in_a_row = 0, noise_percent = NULL, noise_nights = 0 WHERE agent_id = $1::uuid",
            released.agent_id);
        return released;
      });
}

}  // namespace fleetmark::store
