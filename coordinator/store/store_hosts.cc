#include "coordinator/store/store_hosts.h"

#include <algorithm>
#include <map>
#include <set>

#include "coordinator/scheduler/same_host.h"
#include "coordinator/store/store_internal.h"

namespace fleetmark::store::internal {
namespace {

struct HostedAgent {
  std::string agent_id, machine_id, boot_id;
  bool exclusive_cpus = false;
  scheduler::HostIdentity identity() const { return {machine_id, boot_id, exclusive_cpus}; }
};

HostedAgent FromRow(const pqxx::row& row) {
  return {row[0].as<std::string>(), row[1].as<std::string>(), row[2].as<std::string>(), row[3].as<bool>()};
}

}  // namespace

std::vector<std::string> AgentsFreeToStart(pqxx::work& txn, const std::vector<std::string>& agent_ids,
                                           bool only_with_queued_job) {
  if (agent_ids.empty()) return agent_ids;
  const std::string ids = UuidArray(agent_ids);
  std::map<std::string, HostedAgent> hosted;  // candidates with a host identity
  for (const auto& row : txn.exec_params("SELECT agent_id::text, machine_id, boot_id, exclusive_cpus FROM agents "
                                         "WHERE agent_id = ANY($1::uuid[]) AND machine_id <> '' AND boot_id <> ''",
                                         ids)) {
    HostedAgent agent = FromRow(row);
    hosted.emplace(agent.agent_id, std::move(agent));
  }
  if (hosted.empty()) return agent_ids;  // the common fleet: one agent per device, or no identities
  std::set<std::string> hosts, machines;
  for (const auto& [id, agent] : hosted) {
    hosts.insert(absl::StrCat("fleetmark host ", agent.machine_id, " ", agent.boot_id));
    machines.insert(agent.machine_id);
  }
  // In key order: two claims never wait for each other's hosts in a cycle.
  for (const std::string& host : hosts) txn.exec_params("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", host);
  std::vector<HostedAgent> busy;
  for (const auto& row :
       txn.exec_params("SELECT a.agent_id::text, a.machine_id, a.boot_id, a.exclusive_cpus FROM agents a "
                       "WHERE a.machine_id = ANY($1::text[]) AND a.removed_at IS NULL AND EXISTS ("
                       "  SELECT 1 FROM jobs b WHERE b.agent_id = a.agent_id AND b.status IN ('assigned', 'running'))",
                       TextArray(std::vector<std::string>(machines.begin(), machines.end())))) {
    busy.push_back(FromRow(row));
  }
  std::set<std::string> with_work;
  if (only_with_queued_job) {
    std::vector<std::string> hosted_ids;
    for (const auto& [id, agent] : hosted) hosted_ids.push_back(id);
    for (const auto& row : txn.exec_params(
             "SELECT DISTINCT agent_id::text FROM jobs WHERE agent_id = ANY($1::uuid[]) AND status = 'queued'",
             UuidArray(hosted_ids))) {
      with_work.insert(row[0].as<std::string>());
    }
  }
  std::vector<std::string> free;
  for (const std::string& id : agent_ids) {
    auto found = hosted.find(id);
    if (found == hosted.end()) {
      free.push_back(id);
      continue;
    }
    const HostedAgent& agent = found->second;
    const bool blocked = std::any_of(busy.begin(), busy.end(), [&](const HostedAgent& other) {
      return other.agent_id != id && scheduler::TakeTurns(agent.identity(), other.identity());
    });
    if (blocked) continue;
    free.push_back(id);
    // Served now: its neighbours on the host wait for its job (unless it gets none).
    if (!only_with_queued_job || with_work.count(id) > 0) busy.push_back(agent);
  }
  return free;
}

}  // namespace fleetmark::store::internal
