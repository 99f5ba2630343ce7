// The coordinator's own measurements for `GET /metrics` (docs/operations.md,
// "Health and metrics", lists every metric): updated on the hot paths (ingest, dispatch, agent streams) with
// atomics only, read at scrape time by RenderCoordinatorMetrics, which writes them with
// the fleet's counts from the store in Prometheus' text exposition format.
//
// Thread-safety: every member is safe from any thread.
#pragma once

#include <array>
#include <string>

#include "coordinator/alerts/alert_webhook.h"
#include "coordinator/service/metrics.h"
#include "coordinator/store/notification_listener.h"
#include "coordinator/store/read_router.h"
#include "coordinator/store/store.h"

namespace fleetmark::service {

struct CoordinatorMetrics {
  // Results newly committed to the database (replays acked as duplicates excluded).
  metrics::Counter results_ingested;
  // One observation per result batch transaction (Store::InsertResults), seconds.
  metrics::Histogram ingest_commit_seconds{metrics::ExponentialBuckets(0.0005, 2, 16)};  // 0.5 ms .. 16 s
  // Results per batch transaction.
  metrics::Histogram ingest_batch_size{metrics::ExponentialBuckets(1, 2, 10)};  // 1 .. 512
  // Agent streams (AgentService.Connect) open now, welcomed or not.
  metrics::Gauge agent_streams_open;
  // Hellos refused because the coordinator held its stream budget (stream_budget.h).
  metrics::Counter agent_streams_refused;
  // Per job pushed: from the Wake that asked for its agent to the assignment queued on
  // the agent's stream (claim transaction included), seconds.
  metrics::Histogram dispatch_seconds{metrics::ExponentialBuckets(0.0005, 2, 16)};
  // Notifications received from the database (LISTEN), by store::NotificationKind
  // (index: its value), whether or not they named an agent held here.
  std::array<metrics::Counter, 3> notifications;
  // Confirmed changes POSTed to --alert_webhook_url, by how each ended (ok, failed,
  // dropped).
  alerts::AlertCounters alert_webhook_posts;
};

// What one scrape reads; not owned. read_router and listener may be null (no replica,
// --listen_notifications=false).
struct MetricsSources {
  store::Store* store = nullptr;
  const CoordinatorMetrics* metrics = nullptr;
  int stream_budget = 0;  // agent streams admitted (StreamSlots::budget)
  const store::ReadRouter* read_router = nullptr;
  const store::NotificationListener* listener = nullptr;
};

// The text of GET /metrics: the fleet's counts from the store (left out when the
// database does not answer), then this process's measurements.
std::string RenderCoordinatorMetrics(const MetricsSources& sources);

}  // namespace fleetmark::service
