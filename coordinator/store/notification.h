// What coordinators sharing one database tell each other through PostgreSQL
// `LISTEN/NOTIFY` (channel kNotificationChannel): the store sends a notification inside
// the transaction that queues jobs, ends jobs (cancel, lease expiry) or makes agents
// unwelcome (token revoked, agent removed), so it is delivered only on commit; each
// coordinator's NotificationListener (notification_listener.h) hands it to the service,
// which does at once for the agents it holds what its periodic sweep would do later.
//
// Payload: "<kind> <item>,<item>,..." with kind "queued" / "disconnect" (items: agent
// ids) or "ended" (items: "<agent id>/<job id>"). PostgreSQL refuses payloads of 8000
// bytes or more, so NotificationPayloads cuts a long list into several notifications.
//
//   for (const std::string& payload : NotificationPayloads(NotificationKind::kQueued, agent_ids)) ...
//   absl::StatusOr<Notification> n = ParseNotification(payload);
//
// Pure functions, any thread.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace fleetmark::store {

inline constexpr char kNotificationChannel[] = "fleetmark";
// Largest payload NotificationPayloads writes (PostgreSQL: shorter than 8000 bytes).
inline constexpr size_t kMaxNotificationPayloadBytes = 7900;

enum class NotificationKind {
  kQueued,      // these agents have a queued job: claim it if the agent is idle here
  kEnded,       // these (agent, job) ended: tell the agent to stop the job
  kDisconnect,  // these agents' token was revoked or they were removed: end their streams
};

// "queued", "ended", "disconnect".
absl::string_view NotificationKindName(NotificationKind kind);

struct Notification {
  NotificationKind kind = NotificationKind::kQueued;
  std::vector<std::string> agent_ids = {};
  // kEnded only: job_ids[i] is agent_ids[i]'s job.
  std::vector<std::string> job_ids = {};
};

// The payloads announcing `n` (none when it names no agent), each at most
// kMaxNotificationPayloadBytes. Ids are UUIDs (not checked here).
std::vector<std::string> NotificationPayloads(const Notification& n);

// Parses one payload. InvalidArgument naming what is wrong (unknown kind, an id that is
// not a UUID, an "ended" item without '/') for a payload no coordinator wrote.
absl::StatusOr<Notification> ParseNotification(absl::string_view payload);

}  // namespace fleetmark::store
