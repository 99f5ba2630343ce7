#include "coordinator/store/notification.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "coordinator/store/store_internal.h"

namespace fleetmark::store {

absl::string_view NotificationKindName(NotificationKind kind) {
  switch (kind) {
    case NotificationKind::kQueued:
      return "queued";
    case NotificationKind::kEnded:
      return "ended";
    case NotificationKind::kDisconnect:
      return "disconnect";
  }
  return "queued";
}

std::vector<std::string> NotificationPayloads(const Notification& n) {
  std::vector<std::string> payloads;
  const std::string head = absl::StrCat(NotificationKindName(n.kind), " ");
  std::string payload;
  for (size_t i = 0; i < n.agent_ids.size(); ++i) {
    std::string item = n.kind == NotificationKind::kEnded && i < n.job_ids.size()
                           ? absl::StrCat(n.agent_ids[i], "/", n.job_ids[i])
                           : n.agent_ids[i];
    if (!payload.empty() && payload.size() + 1 + item.size() > kMaxNotificationPayloadBytes) {
      payloads.push_back(std::move(payload));
      payload.clear();
    }
    absl::StrAppend(&payload, payload.empty() ? head : ",", item);
  }
  if (!payload.empty()) payloads.push_back(std::move(payload));
  return payloads;
}

absl::StatusOr<Notification> ParseNotification(absl::string_view payload) {
  const size_t space = payload.find(' ');
  const absl::string_view kind = payload.substr(0, space);
  Notification n;
  bool known = false;
  for (NotificationKind k : {NotificationKind::kQueued, NotificationKind::kEnded, NotificationKind::kDisconnect}) {
    if (kind == NotificationKindName(k)) {
      n.kind = k;
      known = true;
    }
  }
  if (!known) {
    return absl::InvalidArgumentError(
        absl::StrCat("notification \"", payload.substr(0, 64), "\": kind must be queued, ended or disconnect"));
  }
  if (space == absl::string_view::npos) return n;
  for (absl::string_view item : absl::StrSplit(payload.substr(space + 1), ',', absl::SkipEmpty())) {
    absl::string_view agent = item, job;
    if (n.kind == NotificationKind::kEnded) {
      const size_t slash = item.find('/');
      if (slash == absl::string_view::npos) {
        return absl::InvalidArgumentError(
            absl::StrCat("notification \"", payload.substr(0, 64), "\": an ended item is <agent id>/<job id>"));
      }
      agent = item.substr(0, slash);
      job = item.substr(slash + 1);
      if (!internal::IsUuid(std::string_view(job.data(), job.size()))) {
        return absl::InvalidArgumentError(
            absl::StrCat("notification: job id \"", job.substr(0, 64), "\" is not a UUID"));
      }
      n.job_ids.emplace_back(job);
    }
    if (!internal::IsUuid(std::string_view(agent.data(), agent.size()))) {
      return absl::InvalidArgumentError(
          absl::StrCat("notification: agent id \"", agent.substr(0, 64), "\" is not a UUID"));
    }
    n.agent_ids.emplace_back(agent);
  }
  return n;
}

}  // namespace fleetmark::store
