#include "coordinator/service/notification_handler.h"

#include <string>
#include <utility>
#include <vector>

#include "coordinator/service/job_stop.h"

namespace fleetmark::service {

NotificationHandler::NotificationHandler(const AgentRegistry& registry, Dispatcher& dispatcher, Executor& executor,
                                         std::function<void()> end_revoked, CoordinatorMetrics* metrics)
    : registry_(registry),
      dispatcher_(dispatcher),
      executor_(executor),
      end_revoked_(std::move(end_revoked)),
      metrics_(metrics) {}

void NotificationHandler::Handle(const store::Notification& n) {
  std::vector<std::string> local;
  for (const std::string& agent_id : n.agent_ids) {
    if (registry_.Find(agent_id) != nullptr) local.push_back(agent_id);
  }
  if (metrics_ != nullptr) metrics_->notifications[static_cast<size_t>(n.kind)].Add();
  if (local.empty()) return;
  switch (n.kind) {
    case store::NotificationKind::kQueued:
      dispatcher_.Wake(local);
      return;
    case store::NotificationKind::kEnded: {
      std::vector<std::pair<std::string, std::string>> agent_jobs;
      for (size_t i = 0; i < n.agent_ids.size() && i < n.job_ids.size(); ++i) {
        agent_jobs.emplace_back(n.agent_ids[i], n.job_ids[i]);
      }
      StopJobs(registry_, agent_jobs, "the job ended (cancelled or failed)");
      return;
    }
    case store::NotificationKind::kDisconnect:
      executor_.Post(end_revoked_);
      return;
  }
}

}  // namespace fleetmark::service
