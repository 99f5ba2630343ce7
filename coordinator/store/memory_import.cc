// MemoryStore::ImportResults, with PgStore's semantics (store_import.cc; the shared rules
// are result_import.h).
#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "coordinator/store/memory_tables.h"
#include "coordinator/store/result_import.h"
#include "engine/common/status_macros.h"

namespace fleetmark::store {

absl::StatusOr<ImportOutcome> MemoryStore::ImportResults(const v1::ResultsDocument& document,
                                                         const std::string& submitted_by) {
  FLEETMARK_RETURN_IF_ERROR(internal::CheckImport(document, submitted_by));
  MemoryTransaction txn(*db_);
  auto& t = txn.tables();
  std::set<std::string> stored;
  for (const v1::ResultsDevice& device : document.devices()) {
    for (const v1::CaseResult& r : device.results()) {
      const std::string id = absl::AsciiStrToLower(r.result_id());
      if (t.results.count(id) > 0) stored.insert(id);
    }
  }
  ImportOutcome outcome;
  const std::vector<std::vector<int>> fresh = internal::NewImportResults(document, stored, &outcome);
  if (outcome.stored == 0) return outcome;

  // Agents not removed, oldest first (PgStore: ORDER BY created_at).
  std::vector<const memory::Agent*> live;
  for (const auto& [id, a] : t.agents) {
    if (!a.removed_at) live.push_back(&a);
  }
  std::sort(live.begin(), live.end(), [](const memory::Agent* a, const memory::Agent* b) {
    return a->seq != b->seq ? a->seq < b->seq : a->agent_id < b->agent_id;
  });
  std::vector<internal::ImportCandidate> candidates;
  std::set<std::string> names;
  for (const memory::Agent* a : live) {
    candidates.push_back({a->agent_id, a->name, a->host, a->imported});
    names.insert(a->name);
  }
  const internal::ImportTimes times = internal::ImportRunTimes(document.run(), txn.now());
  const std::string run_id = txn.NewId();
  memory::Run& run = t.runs[run_id];
  run.run_id = run_id;
  run.plan.set_name(document.run().plan_name());
  run.submitted_by = submitted_by;
  run.quick = document.run().quick();
  run.imported = true;
  run.status = kJobDone;
  run.created_at = times.created;
  run.finished_at = times.finished;
  run.seq = txn.seq();
  outcome.run_id = run_id;
  internal::AssignImportAgents(
      document, fresh, &candidates, &names,
      [&](const v1::ResultsDevice& device, const std::string& name) {
        const std::string agent_id = txn.NewId();
        memory::Agent& agent = t.agents[agent_id];
        agent.agent_id = agent_id;
        agent.name = name;
        agent.host = device.host();
        agent.host_bytes = device.host().SerializeAsString();
        agent.engine_version = device.host().engine_version();
        agent.state = "offline";
        agent.imported = true;
        agent.profile = std::make_shared<const AgentProfile>(AgentProfile{device.host(), {}});
        agent.seq = txn.seq();
        return agent_id;
      },
      &outcome);
  for (int i = 0; i < document.devices_size(); ++i) {
    if (fresh[i].empty()) continue;
    const v1::ResultsDevice& device = document.devices(i);
    const std::string job_id = txn.NewId();
    memory::Job& job = t.jobs[job_id];
    job.job_id = job_id;
    job.run_id = run_id;
    job.agent_id = outcome.devices[i].agent_id;
    job.status = kJobDone;
    job.attempts = 1;
    job.max_attempts = 1;
    job.cases_done = job.cases_total = static_cast<uint32_t>(fresh[i].size());
    job.created_at = times.created;
    job.finished_at = times.finished;
    job.seq = txn.seq();
    for (int j : fresh[i]) {
      const v1::CaseResult copy = internal::ImportedResult(device.results(j), run_id, job_id);
      memory::PutResult(txn, absl::AsciiStrToLower(copy.result_id()), copy, job, device.host().emulated());
    }
  }
  return outcome;
}

}  // namespace fleetmark::store
