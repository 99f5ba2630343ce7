// Store: agents (registration, liveness, listing).
#include <pqxx/pqxx>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "engine/common/status_macros.h"
#include "coordinator/store/store.h"
#include "coordinator/store/store_internal.h"

namespace fleetmark::store {

using internal::InTransaction;
using internal::InTransactionOr;

absl::StatusOr<AgentIdentity> Store::FindAgentByName(const std::string& name) {
  return InTransactionOr(*pool_, "find agent", [&](pqxx::work& txn) -> absl::StatusOr<AgentIdentity> {
    pqxx::result r = txn.exec_prepared("fm_find_agent", name);
    if (r.empty()) return absl::NotFoundError(absl::StrCat("agent \"", name, "\" not found"));
    AgentIdentity identity;
    identity.agent_id = r[0][0].as<std::string>();
    identity.name = r[0][1].as<std::string>();
    identity.credential_sha256 = r[0][2].as<std::string>();
    identity.token_revoked = r[0][3].as<bool>();
    return identity;
  });
}

absl::StatusOr<std::string> Store::RegisterAgent(const AgentRegistration& reg) {
  return InTransaction(*pool_, absl::StrCat("register agent ", reg.name), [&](pqxx::work& txn) {
    const std::string host_bytes = reg.host.SerializeAsString();
    pqxx::result old = txn.exec_params("SELECT host FROM agents WHERE name = $1 FOR UPDATE", reg.name);
    bool host_changed = old.empty() || pqxx::binarystring(old[0][0]).str() != host_bytes;
    pqxx::result r = txn.exec_params(
        "INSERT INTO agents (agent_id, name, credential_sha256, token_id, host, arch, cpu_model,"
        " logical_cpus, physical_cores, labels, engine_version, strategies, workloads, scenarios,"
        " state, coordinator_id, session_id, last_seen, emulated) "
        "VALUES (gen_random_uuid(), $1, $2, NULLIF($3, ''), $4, $5, $6, $7, $8, $9::jsonb, $10,"
        " $11::text[], $12::text[], $13::text[], 'online', $14, $15, now(), $16) "
        "ON CONFLICT (name) DO UPDATE SET"
        " credential_sha256 = CASE WHEN EXCLUDED.credential_sha256 = '' THEN agents.credential_sha256"
        "                          ELSE EXCLUDED.credential_sha256 END,"
        " token_id = coalesce(EXCLUDED.token_id, agents.token_id), host = EXCLUDED.host,"
        " arch = EXCLUDED.arch, cpu_model = EXCLUDED.cpu_model, logical_cpus = EXCLUDED.logical_cpus,"
        " physical_cores = EXCLUDED.physical_cores, labels = EXCLUDED.labels,"
        " engine_version = EXCLUDED.engine_version, strategies = EXCLUDED.strategies,"
        " workloads = EXCLUDED.workloads, scenarios = EXCLUDED.scenarios, state = 'online',"
        " coordinator_id = EXCLUDED.coordinator_id, session_id = EXCLUDED.session_id, last_seen = now(),"
        " emulated = EXCLUDED.emulated "
        "RETURNING agent_id::text",
        reg.name, reg.credential_sha256, reg.token_id, pqxx::binarystring(host_bytes), reg.host.arch(),
        reg.host.cpu_model(), static_cast<int64_t>(reg.host.logical_cpus()),
        static_cast<int64_t>(reg.host.physical_cores()), internal::LabelsJson(reg.labels),
        reg.engine_version, internal::TextArray(reg.strategies), internal::TextArray(reg.workloads),
        internal::TextArray(reg.scenarios), options_.coordinator_id, reg.session_id, reg.host.emulated());
    std::string agent_id = r[0][0].as<std::string>();
    if (host_changed) {
      txn.exec_params("INSERT INTO host_snapshots (agent_id, host) VALUES ($1::uuid, $2)", agent_id,
                      pqxx::binarystring(host_bytes));
    }
    return agent_id;
  });
}

absl::Status Store::SetAgentOffline(const std::string& agent_id, const std::string& session_id) {
  FLEETMARK_RETURN_IF_ERROR(internal::CheckUuid("agent_id", agent_id));
  return InTransaction(*pool_, "agent offline", [&](pqxx::work& txn) {
           txn.exec_prepared("fm_agent_offline", agent_id, session_id);
           return true;
         })
      .status();
}

absl::Status Store::RecordLiveness(const std::vector<AgentLiveness>& batch, absl::Duration lease,
                                   const std::vector<std::string>& renew_also) {
  for (const std::string& id : renew_also) FLEETMARK_RETURN_IF_ERROR(internal::CheckUuid("renew_also[]", id));
  std::vector<std::string> ids, seen, rss, cpu;
  for (const AgentLiveness& a : batch) {
    FLEETMARK_RETURN_IF_ERROR(internal::CheckUuid("agent_id", a.agent_id));
    ids.push_back(a.agent_id);
    seen.push_back(internal::TimeParam(a.last_seen));
    rss.push_back(absl::StrCat(a.rss_bytes));
    cpu.push_back(absl::StrFormat("%.6f", a.cpu_seconds));
  }
  const std::string id_array = internal::UuidArray(ids);
  std::vector<std::string> leases = ids;
  leases.insert(leases.end(), renew_also.begin(), renew_also.end());
  // Even with nothing to write, one round trip: the caller learns whether the database
  // is reachable (an idle coordinator must notice an outage, to hold off lease expiry).
  return InTransaction(*pool_, "record liveness", [&](pqxx::work& txn) {
           if (!ids.empty()) {
             txn.exec_prepared("fm_liveness_agents", id_array, internal::TextArray(seen),
                               absl::StrCat("{", absl::StrJoin(rss, ","), "}"),
                               absl::StrCat("{", absl::StrJoin(cpu, ","), "}"));
           }
           if (!leases.empty()) {
             txn.exec_prepared("fm_liveness_leases", internal::UuidArray(leases), internal::IntervalParam(lease));
           } else {
             txn.exec("SELECT 1");
           }
           return true;
         })
      .status();
}

absl::StatusOr<std::vector<AgentSummary>> Store::ListAgentSummaries() {
  return InTransaction(*pool_, "list agents", [&](pqxx::work& txn) {
    std::vector<AgentSummary> agents;
    // A revoked token's agent is being disconnected (revocation.h): never selected.
    pqxx::result r = txn.exec_params(
        "SELECT a.agent_id::text, a.name, (a.state = 'online' AND a.last_seen > now() - $1::interval"
        "  AND NOT EXISTS (SELECT 1 FROM enrollment_tokens t WHERE t.token_id = a.token_id"
        "                  AND t.revoked_at IS NOT NULL)),"
        " a.host, a.labels::text FROM agents a ORDER BY a.name",
        internal::IntervalParam(options_.online_window));
    for (const auto& row : r) {
      AgentSummary& a = agents.emplace_back();
      a.agent_id = row[0].as<std::string>();
      a.name = row[1].as<std::string>();
      a.online = row[2].as<bool>();
      internal::ParseProtoField(row[3], &a.host);
      a.labels = internal::ParseLabelsJson(row[4].as<std::string>());
    }
    return agents;
  });
}

absl::StatusOr<std::vector<v1::AgentInfo>> Store::ListAgents() {
  return InTransaction(*pool_, "list agents", [&](pqxx::work& txn) {
    std::vector<v1::AgentInfo> agents;
    pqxx::result r = txn.exec_params(
        "SELECT a.agent_id::text, a.name, (a.state = 'online' AND a.last_seen > now() - $1::interval),"
        " a.host, a.labels::text, " +
            internal::UnixNs("a.last_seen") +
            ", coalesce((SELECT j.job_id::text FROM jobs j WHERE j.agent_id = a.agent_id"
            "  AND j.status IN ('assigned', 'running') LIMIT 1), ''), a.rss_bytes, a.cpu_seconds "
            "FROM agents a ORDER BY a.name",
        internal::IntervalParam(options_.online_window));
    for (const auto& row : r) {
      v1::AgentInfo& a = agents.emplace_back();
      a.set_agent_id(row[0].as<std::string>());
      a.set_name(row[1].as<std::string>());
      a.set_state(row[2].as<bool>() ? "online" : "offline");
      internal::ParseProtoField(row[3], a.mutable_host());
      for (const auto& [k, v] : internal::ParseLabelsJson(row[4].as<std::string>())) {
        (*a.mutable_labels())[k] = v;
      }
      a.set_last_seen_unix_ns(row[5].is_null() ? 0 : row[5].as<int64_t>());
      a.set_running_job_id(row[6].as<std::string>());
      a.set_rss_bytes(row[7].as<uint64_t>());
      a.set_cpu_seconds(row[8].as<double>());
    }
    return agents;
  });
}

}  // namespace fleetmark::store
