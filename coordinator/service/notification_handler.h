// What a coordinator does with a notification from the database (store/notification.h,
// sent by any coordinator's transaction, its own included): for the agents it holds,
// what its periodic sweep would do, at once; ids of agents held elsewhere are ignored.
//   queued     → Dispatcher::Wake (claims the job if the agent is idle here);
//   ended      → a Cancellation to the agent still running the job (job_stop.h);
//   disconnect → `end_revoked` on the executor (revocation.h: one query says why, and
//                the streams of removed or revoked agents are ended).
// The sweep stays the safety net for notifications lost while the listener reconnects.
//
// Thread-safety: Handle may be called from any thread (the listener's); it only queues
// work and returns.
#pragma once

#include <functional>

#include "coordinator/service/agent_registry.h"
#include "coordinator/service/coordinator_metrics.h"
#include "coordinator/service/dispatcher.h"
#include "coordinator/service/executor.h"
#include "coordinator/store/notification.h"

namespace fleetmark::service {

class NotificationHandler {
 public:
  // References (and `metrics`, when not null: counts by kind) must outlive the handler.
  NotificationHandler(const AgentRegistry& registry, Dispatcher& dispatcher, Executor& executor,
                      std::function<void()> end_revoked, CoordinatorMetrics* metrics = nullptr);

  void Handle(const store::Notification& notification);

 private:
  const AgentRegistry& registry_;
  Dispatcher& dispatcher_;
  Executor& executor_;
  const std::function<void()> end_revoked_;
  CoordinatorMetrics* const metrics_;
};

}  // namespace fleetmark::service
