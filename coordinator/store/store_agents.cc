// Store: agents (registration, liveness, listing).
#include <algorithm>
#include <set>

#include <pqxx/pqxx>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "engine/common/status_macros.h"
#include "coordinator/store/pg_store.h"
#include "coordinator/store/store_internal.h"
#include "coordinator/store/store_runs.h"

namespace fleetmark::store {

using internal::InTransaction;
using internal::InTransactionOr;

absl::StatusOr<AgentIdentity> PgStore::FindAgentByName(const std::string& name) {
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

absl::StatusOr<std::string> PgStore::RegisterAgent(const AgentRegistration& reg) {
  if (!reg.agent_id.empty()) FLEETMARK_RETURN_IF_ERROR(internal::CheckUuid("agent_id", reg.agent_id));
  return InTransactionOr(
      *pool_, absl::StrCat("register agent ", reg.name), [&](pqxx::work& txn) -> absl::StatusOr<std::string> {
        const std::string host_bytes = reg.host.SerializeAsString();
        std::string agent_id;
        bool host_changed = true;
        if (reg.agent_id.empty()) {
          // A new enrollment takes the name only if no agent holds it (agents_name_active):
          // atomic across coordinators, as the insert waits for a concurrent one of the same
          // name and then does nothing.
          pqxx::result r = txn.exec_params(
              "INSERT INTO agents (agent_id, name, credential_sha256, token_id, host, arch, cpu_model,"
              " logical_cpus, physical_cores, labels, engine_version, strategies, workloads, scenarios,"
              " state, coordinator_id, session_id, last_seen, emulated, session_instance) "
              "VALUES (gen_random_uuid(), $1, $2, NULLIF($3, ''), $4, $5, $6, $7, $8, $9::jsonb, $10,"
              " $11::text[], $12::text[], $13::text[], 'online', $14, $15, now(), $16, $17) "
              "ON CONFLICT (name) WHERE removed_at IS NULL DO NOTHING RETURNING agent_id::text",
              reg.name, reg.credential_sha256, reg.token_id, pqxx::binarystring(host_bytes), reg.host.arch(),
              reg.host.cpu_model(), static_cast<int64_t>(reg.host.logical_cpus()),
              static_cast<int64_t>(reg.host.physical_cores()), internal::LabelsJson(reg.labels), reg.engine_version,
              internal::TextArray(reg.strategies), internal::TextArray(reg.workloads),
              internal::TextArray(reg.scenarios), options_.coordinator_id, reg.session_id, reg.host.emulated(),
              reg.instance_id);
          if (r.empty()) {
            pqxx::result held =
                txn.exec_params("SELECT agent_id::text FROM agents WHERE name = $1 AND removed_at IS NULL", reg.name);
            return absl::AlreadyExistsError(absl::StrCat(
                "agent name \"", reg.name, "\" is taken by enrolled agent ",
                held.empty() ? std::string("?") : held[0][0].as<std::string>(),
                " (a name belongs to the agent holding its credential): choose another --name, or, if that "
                "agent is gone or lost its credential, remove it first with: fleetmark agents remove ",
                reg.name));
          }
          agent_id = r[0][0].as<std::string>();
        } else {
          // The row lock orders concurrent hellos of one agent: the second sees the first's session.
          pqxx::result old = txn.exec_params(
              "SELECT host, session_id, session_instance, coordinator_id,"
              " state = 'online' AND session_id <> '' AND last_seen > now() - $2::interval,"
              " coalesce(extract(epoch FROM now() - last_seen), 0)::float8, state = 'online' "
              "FROM agents WHERE agent_id = $1::uuid AND removed_at IS NULL FOR NO KEY UPDATE",
              reg.agent_id, internal::IntervalParam(options_.online_window));
          if (old.empty()) {
            return absl::NotFoundError(absl::StrCat("agent ", reg.agent_id, " (\"", reg.name, "\") was removed"));
          }
          const std::string held = old[0][1].as<std::string>();
          const std::string held_instance = old[0][2].as<std::string>();
          const bool same_process = !reg.instance_id.empty() && held_instance == reg.instance_id;
          const bool ended_here = reg.session_ended_here && !held.empty() && reg.session_ended_here(held);
          if (old[0][4].as<bool>() && held != reg.session_id && !same_process && !ended_here) {
            return absl::FailedPreconditionError(absl::StrFormat(
                "%sagent \"%s\" has a live session on coordinator %s (heard %.0f s ago) from another process; "
                "one identity has one session at a time (is a copy of this agent's credential file in use?); "
                "this process is refused until that session ends or is silent for %s (at least %.0f s more)",
                kIdentityInUsePrefix, reg.name, old[0][3].as<std::string>(), old[0][5].as<double>(),
                absl::FormatDuration(options_.online_window),
                std::max(0.0, absl::ToDoubleSeconds(options_.online_window) - old[0][5].as<double>())));
          }
          // Another process's session, possibly still open on its coordinator (silent,
          // not ended): that coordinator ends it on commit (AgentsToDisconnect).
          if (old[0][6].as<bool>() && !held.empty() && held != reg.session_id && !same_process && !ended_here) {
            internal::Notify(txn, {.kind = NotificationKind::kDisconnect, .agent_ids = {reg.agent_id}});
          }
          host_changed = pqxx::binarystring(old[0][0]).str() != host_bytes;
          txn.exec_params(
              "UPDATE agents SET host = $2, arch = $3, cpu_model = $4, logical_cpus = $5, physical_cores = $6,"
              " labels = $7::jsonb, engine_version = $8, strategies = $9::text[], workloads = $10::text[],"
              " scenarios = $11::text[], state = 'online', coordinator_id = $12, session_id = $13, last_seen = now(),"
              " emulated = $14, profile_version = profile_version + 1, session_instance = $15 "
              "WHERE agent_id = $1::uuid",
              reg.agent_id, pqxx::binarystring(host_bytes), reg.host.arch(), reg.host.cpu_model(),
              static_cast<int64_t>(reg.host.logical_cpus()), static_cast<int64_t>(reg.host.physical_cores()),
              internal::LabelsJson(reg.labels), reg.engine_version, internal::TextArray(reg.strategies),
              internal::TextArray(reg.workloads), internal::TextArray(reg.scenarios), options_.coordinator_id,
              reg.session_id, reg.host.emulated(), reg.instance_id);
          agent_id = reg.agent_id;
        }
        // The host identity the same-host rule compares (store_hosts.h, same_host.h).
        txn.exec_params(
            "UPDATE agents SET machine_id = $2, boot_id = $3, exclusive_cpus = $4 WHERE agent_id = $1::uuid", agent_id,
            reg.machine_id, reg.boot_id, reg.exclusive_cpus);
        if (host_changed) {
          txn.exec_params("INSERT INTO host_snapshots (agent_id, host) VALUES ($1::uuid, $2)", agent_id,
                          pqxx::binarystring(host_bytes));
        }
        return agent_id;
      });
}

absl::StatusOr<RemovedAgent> PgStore::RemoveAgent(const std::string& name) {
  return InTransactionOr(
      *pool_, absl::StrCat("remove agent ", name), [&](pqxx::work& txn) -> absl::StatusOr<RemovedAgent> {
        pqxx::result r = txn.exec_params(
            "UPDATE agents SET removed_at = now(), state = 'offline' WHERE name = $1 AND removed_at IS NULL "
            "RETURNING agent_id::text",
            name);
        if (r.empty()) {
          pqxx::result removed = txn.exec_params("SELECT 1 FROM agents WHERE name = $1 LIMIT 1", name);
          return absl::NotFoundError(absl::StrCat("agent \"", name, "\" ",
                                                  removed.empty() ? "not found" : "was already removed",
                                                  " (`fleetmark agents list --all` lists every agent)"));
        }
        RemovedAgent agent;
        agent.agent_id = r[0][0].as<std::string>();
        // Its unfinished jobs end now (it will never run them), so their runs can end.
        pqxx::result jobs = txn.exec_params(
            "UPDATE jobs SET status = 'failed', failure_kind = 'infrastructure',"
            " message = 'infrastructure: agent ' || $2 || ' removed (fleetmark agents remove)',"
            " lease_expires_at = NULL, finished_at = now(), updated_at = now() "
            "WHERE agent_id = $1::uuid AND status IN ('queued', 'assigned', 'running') "
            "RETURNING job_id::text, run_id::text",
            agent.agent_id, name);
        std::set<std::string> runs;
        for (const auto& row : jobs) {
          agent.failed_jobs.push_back(row[0].as<std::string>());
          runs.insert(row[1].as<std::string>());
        }
        for (const std::string& run_id : runs) internal::RefreshRun(txn, run_id);
        // The coordinator holding its stream ends it on commit.
        internal::Notify(txn, {.kind = NotificationKind::kDisconnect, .agent_ids = {agent.agent_id}});
        return agent;
      });
}

absl::Status PgStore::SetAgentOffline(const std::string& agent_id, const std::string& session_id) {
  FLEETMARK_RETURN_IF_ERROR(internal::CheckUuid("agent_id", agent_id));
  return InTransaction(*pool_, "agent offline",
                       [&](pqxx::work& txn) {
                         txn.exec_prepared("fm_agent_offline", agent_id, session_id);
                         return true;
                       })
      .status();
}

absl::Status PgStore::RecordLiveness(const std::vector<AgentLiveness>& batch, absl::Duration lease,
                                     const std::vector<std::string>& renew_also) {
  for (const std::string& id : renew_also) FLEETMARK_RETURN_IF_ERROR(internal::CheckUuid("renew_also[]", id));
  // The arrays in agent id order (deterministic statements). The statements skip rows
  // other transactions hold, so they take part in no deadlock (fm_liveness_agents);
  // Aborted (a serialization failure) is still retried, as a safety net.
  std::vector<const AgentLiveness*> sorted;
  sorted.reserve(batch.size());
  for (const AgentLiveness& a : batch) sorted.push_back(&a);
  std::sort(sorted.begin(), sorted.end(),
            [](const AgentLiveness* x, const AgentLiveness* y) { return x->agent_id < y->agent_id; });
  std::vector<std::string> ids, seen, rss, cpu, sessions;
  for (const AgentLiveness* p : sorted) {
    const AgentLiveness& a = *p;
    FLEETMARK_RETURN_IF_ERROR(internal::CheckUuid("agent_id", a.agent_id));
    ids.push_back(a.agent_id);
    seen.push_back(internal::TimeParam(a.last_seen));
    rss.push_back(absl::StrCat(a.rss_bytes));
    cpu.push_back(absl::StrFormat("%.6f", a.cpu_seconds));
    sessions.push_back(a.session_id);
  }
  const std::string id_array = internal::UuidArray(ids);
  std::vector<std::string> leases = ids;
  leases.insert(leases.end(), renew_also.begin(), renew_also.end());
  // Even with nothing to write, one round trip: the caller learns whether the database
  // is reachable (an idle coordinator must notice an outage, to hold off lease expiry).
  std::sort(leases.begin(), leases.end());
  // A deadlock or serialization failure (Aborted) committed nothing: tried again, twice.
  absl::Status status;
  for (int attempt = 0; attempt < 3; ++attempt) {
    status = InTransaction(*pool_, "record liveness", [&](pqxx::work& txn) {
               if (!ids.empty()) {
                 txn.exec_prepared("fm_liveness_agents", id_array, internal::TextArray(seen),
                                   absl::StrCat("{", absl::StrJoin(rss, ","), "}"),
                                   absl::StrCat("{", absl::StrJoin(cpu, ","), "}"), internal::TextArray(sessions));
               }
               if (!leases.empty()) {
                 txn.exec_prepared("fm_liveness_leases", internal::UuidArray(leases), internal::IntervalParam(lease));
               } else {
                 txn.exec("SELECT 1");
               }
               return true;
             }).status();
    if (!absl::IsAborted(status)) break;
  }
  return status;
}

absl::StatusOr<std::vector<AgentSummary>> PgStore::ListAgentSummaries() { return ListSummaries(nullptr); }

absl::StatusOr<std::vector<AgentSummary>> PgStore::ListAgentSummariesNamed(const std::string& name) {
  return ListSummaries(&name);
}

absl::StatusOr<std::vector<AgentSummary>> PgStore::ListSummaries(const std::string* name) {
  return InTransaction(*pool_, "list agents", [&](pqxx::work& txn) {
    std::vector<AgentSummary> agents;
    // A revoked token's agent is being disconnected (revocation.h): never selected.
    pqxx::result r = txn.exec_params(
        "SELECT a.agent_id::text, a.name, (a.state = 'online' AND a.last_seen > now() - $1::interval"
        "  AND NOT EXISTS (SELECT 1 FROM enrollment_tokens t WHERE t.token_id = a.token_id"
        "                  AND t.revoked_at IS NOT NULL)),"
        " a.health, a.quarantine_reason, a.profile_version FROM agents a WHERE a.removed_at IS NULL"
        "  AND NOT a.imported"  // an imported device record (migration 0020) is never selected
        "  AND ($2::text IS NULL OR a.name = $2::text)"
        " ORDER BY a.name",
        internal::IntervalParam(options_.online_window),
        name != nullptr ? std::optional<std::string>(*name) : std::nullopt);
    std::vector<int64_t> versions;
    agents.reserve(r.size());
    versions.reserve(r.size());
    for (const auto& row : r) {
      AgentSummary& a = agents.emplace_back();
      a.agent_id = row[0].as<std::string>();
      a.name = row[1].as<std::string>();
      a.online = row[2].as<bool>();
      a.quarantined = row[3].as<std::string>() == kHealthQuarantined;
      a.quarantine_reason = row[4].as<std::string>();
      versions.push_back(row[5].as<int64_t>());
    }
    // The profiles: cached ones at the listed version, the others read (and cached).
    absl::flat_hash_map<std::string, CachedProfile> listed;
    listed.reserve(agents.size());
    std::vector<std::string> stale;
    {
      absl::MutexLock lock(&profiles_mu_);
      for (size_t i = 0; i < agents.size(); ++i) {
        auto it = profiles_.find(agents[i].agent_id);
        if (it != profiles_.end() && it->second.version == versions[i]) {
          listed[agents[i].agent_id] = it->second;
        } else {
          stale.push_back(agents[i].agent_id);
        }
      }
    }
    if (!stale.empty()) {
      pqxx::result p = txn.exec_params(
          "SELECT agent_id::text, profile_version, host, labels::text FROM agents WHERE agent_id = ANY($1::uuid[])",
          internal::UuidArray(stale));
      for (const auto& row : p) {
        auto profile = std::make_shared<AgentProfile>();
        internal::ParseProtoField(row[2], &profile->host);
        profile->labels = internal::ParseLabelsJson(row[3].as<std::string>());
        listed[row[0].as<std::string>()] = {row[1].as<int64_t>(), std::move(profile)};
      }
    }
    static const auto* kNoProfile = new std::shared_ptr<const AgentProfile>(std::make_shared<AgentProfile>());
    for (AgentSummary& a : agents) {
      auto it = listed.find(a.agent_id);
      a.profile = it != listed.end() ? it->second.profile : *kNoProfile;
    }
    {
      absl::MutexLock lock(&profiles_mu_);
      if (name == nullptr) {
        // The agents of this listing only: removed agents leave the cache.
        profiles_ = std::move(listed);
      } else {
        for (auto& [agent_id, cached] : listed) profiles_.insert_or_assign(agent_id, std::move(cached));
      }
    }
    return agents;
  });
}

absl::StatusOr<std::vector<v1::AgentInfo>> PgStore::ListAgents(bool include_removed) {
  return InTransaction(*pool_, "list agents", [&](pqxx::work& txn) {
    std::vector<v1::AgentInfo> agents;
    pqxx::result r = txn.exec_params(
        "SELECT a.agent_id::text, a.name, (a.state = 'online' AND a.last_seen > now() - $1::interval),"
        " a.host, a.labels::text, " +
            internal::UnixNs("a.last_seen") +
            ", coalesce((SELECT j.job_id::text FROM jobs j WHERE j.agent_id = a.agent_id"
            "  AND j.status IN ('assigned', 'running') LIMIT 1), ''), a.rss_bytes, a.cpu_seconds, " +
            internal::UnixNs("a.removed_at") + ", a.health, a.quarantine_reason, " +
            internal::UnixNs("a.quarantined_at") +
            ", a.noise_percent, a.noise_nights, a.machine_id, a.boot_id, a.exclusive_cpus, a.imported "
            "FROM agents a WHERE $2 OR a.removed_at IS NULL ORDER BY a.name, "
            "a.removed_at NULLS FIRST",
        internal::IntervalParam(options_.online_window), include_removed);
    for (const auto& row : r) {
      v1::AgentInfo& a = agents.emplace_back();
      a.set_agent_id(row[0].as<std::string>());
      a.set_name(row[1].as<std::string>());
      const bool removed = !row[9].is_null();
      a.set_imported(row[18].as<bool>());
      a.set_state(removed ? "removed" : a.imported() ? "imported" : row[2].as<bool>() ? "online" : "offline");
      a.set_removed_unix_ns(removed ? row[9].as<int64_t>() : 0);
      internal::ParseProtoField(row[3], a.mutable_host());
      for (const auto& [k, v] : internal::ParseLabelsJson(row[4].as<std::string>())) {
        (*a.mutable_labels())[k] = v;
      }
      a.set_last_seen_unix_ns(row[5].is_null() ? 0 : row[5].as<int64_t>());
      a.set_running_job_id(row[6].as<std::string>());
      a.set_rss_bytes(row[7].as<uint64_t>());
      a.set_cpu_seconds(row[8].as<double>());
      a.set_health(row[10].as<std::string>());
      a.set_quarantine_reason(row[11].as<std::string>());
      a.set_quarantined_unix_ns(row[12].is_null() ? 0 : row[12].as<int64_t>());
      if (!row[13].is_null()) a.set_noise_percent(row[13].as<double>());
      a.set_noise_nights(row[14].as<uint32_t>());
      a.set_machine_id(row[15].as<std::string>());
      a.set_boot_id(row[16].as<std::string>());
      a.set_exclusive_cpus(row[17].as<bool>());
    }
    internal::MarkAgentsOnOneHost(agents);
    return agents;
  });
}

}  // namespace fleetmark::store
