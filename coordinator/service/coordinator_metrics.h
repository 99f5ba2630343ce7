// The coordinator's own measurements for `GET /metrics` (docs/operations.md,
// "Health and metrics", lists every metric): updated on the hot paths (ingest, dispatch, agent streams) with
// atomics only, read at scrape time by Coordinator::RenderMetrics.
//
// Thread-safety: every member is safe from any thread.
#pragma once

#include <array>

#include "coordinator/alerts/alert_webhook.h"
#include "coordinator/service/metrics.h"

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

}  // namespace fleetmark::service
