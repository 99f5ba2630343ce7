// Pushes jobs to connected agents at once: Wake(agent ids) claims, for each idle
// connected agent among them, its oldest queued job (store: FOR UPDATE SKIP LOCKED, one
// active job per agent) and sends the JobAssignment down its stream. Wakes are
// coalesced: many Wake calls while a claim is running become one claim for the union.
//
// Thread-safety: Wake/WakeAllIdle are safe from any thread and return at once; the
// claim runs on the executor.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "coordinator/service/agent_registry.h"
#include "coordinator/service/coordinator_metrics.h"
#include "coordinator/service/executor.h"
#include "coordinator/store/run_store.h"

namespace fleetmark::service {

class Dispatcher {
 public:
  // All references (and `metrics`, when not null: dispatch latency) must outlive the
  // dispatcher.
  Dispatcher(store::RunStore& store, AgentRegistry& registry, Executor& executor, absl::Duration lease,
             CoordinatorMetrics* metrics = nullptr);

  void Wake(const std::vector<std::string>& agent_ids);
  // Every connected agent with no job (the periodic sweep: catches runs other
  // coordinators created whose notification was lost).
  void WakeAllIdle();

  // Of `agent_ids`, those connected here with no job.
  std::vector<std::string> IdleLocal(const std::vector<std::string>& agent_ids) const;
  // Marks each job's agent busy (before returning) and pushes its assignment (jobs of
  // agents no longer connected stay assigned; their leases expire). `requested`: when
  // the claim was asked for (real time), observed as dispatch latency per job pushed;
  // InfinitePast = not observed.
  void Deliver(std::vector<store::ClaimedJob> jobs, absl::Time requested = absl::InfinitePast());

 private:
  void Run();
  // Sends jobs[i] to sessions[i] (null: skipped); large batches are split over the
  // executor's threads.
  void Push(std::vector<store::ClaimedJob> jobs, std::vector<std::shared_ptr<AgentSession>> sessions);

  store::RunStore& store_;
  AgentRegistry& registry_;
  Executor& executor_;
  const absl::Duration lease_;
  absl::Mutex mu_;
  CoordinatorMetrics* const metrics_;
  std::set<std::string> pending_ ABSL_GUARDED_BY(mu_);  // agents to claim for at the next Run
  absl::Time first_wake_ ABSL_GUARDED_BY(mu_);          // of the Wakes pending_ gathered
  bool scheduled_ ABSL_GUARDED_BY(mu_) = false;         // a Run is posted and has not started
};

}  // namespace fleetmark::service
