#include "coordinator/service/coordinator_metrics.h"

#include <string>
#include <utility>

#include "absl/status/statusor.h"

namespace fleetmark::service {

std::string RenderCoordinatorMetrics(const MetricsSources& sources) {
  metrics::ExpositionWriter out;
  absl::StatusOr<store::FleetCounts> fleet = sources.store->CountFleet();
  out.Family("fleetmark_agents",
             "Agents in the database by state (online: seen within the online window; offline: not seen within it; "
             "imported: device records of `fleetmark results import`, never online; removed).",
             "gauge");
  if (fleet.ok()) {
    for (const auto& [state, n] : fleet->agents_by_state) out.Sample("fleetmark_agents", {{"state", state}}, n);
  }
  out.Family("fleetmark_jobs", "Jobs in the database by status.", "gauge");
  if (fleet.ok()) {
    for (const auto& [state, n] : fleet->jobs_by_state) out.Sample("fleetmark_jobs", {{"state", state}}, n);
  }
  out.Family("fleetmark_runs_in_flight", "Runs not yet done, failed or cancelled.", "gauge");
  if (fleet.ok()) out.Sample("fleetmark_runs_in_flight", {}, static_cast<double>(fleet->runs_in_flight));
  out.WriteCounter("fleetmark_results_ingested_total",
                   "Case results this coordinator committed to the database (replays excluded).",
                   sources.metrics->results_ingested);
  out.WriteHistogram("fleetmark_ingest_commit_seconds", "Duration of one result batch transaction.",
                     sources.metrics->ingest_commit_seconds);
  out.WriteHistogram("fleetmark_ingest_batch_size", "Case results per batch transaction.",
                     sources.metrics->ingest_batch_size);
  out.Family("fleetmark_database_errors_total",
             "Database failures seen by this process: connections refused or broken, server errors.", "counter");
  out.Sample("fleetmark_database_errors_total", {}, static_cast<double>(store::DatabaseErrorCount()));
  out.WriteGauge("fleetmark_agent_streams_open", "Agent streams open on this coordinator.",
                 static_cast<double>(sources.metrics->agent_streams_open.value()));
  out.WriteGauge("fleetmark_agent_streams_limit",
                 "Agent streams this coordinator admits: RLIMIT_NOFILE minus its reserve, or --max_agent_streams.",
                 static_cast<double>(sources.stream_budget));
  out.WriteCounter("fleetmark_agent_streams_refused_total",
                   "Agent hellos refused (retryable) because the coordinator held its stream limit.",
                   sources.metrics->agent_streams_refused);
  out.WriteHistogram("fleetmark_dispatch_seconds",
                     "From a job's claim being asked for to its assignment queued on the agent's stream.",
                     sources.metrics->dispatch_seconds);
  out.Family("fleetmark_notifications_received_total",
             "Notifications from the database (LISTEN/NOTIFY between coordinators) by kind.", "counter");
  for (store::NotificationKind kind :
       {store::NotificationKind::kQueued, store::NotificationKind::kEnded, store::NotificationKind::kDisconnect}) {
    out.Sample("fleetmark_notifications_received_total", {{"kind", std::string(store::NotificationKindName(kind))}},
               static_cast<double>(sources.metrics->notifications[static_cast<size_t>(kind)].value()));
  }
  if (sources.read_router != nullptr) {
    const store::ReadRouter::State reads = sources.read_router->state();
    out.Family("fleetmark_read_replica_lag_seconds",
               "How long the read replica has been behind the primary in WAL replay (0 = caught up); no sample "
               "while it cannot be measured.",
               "gauge");
    if (reads.lag_known) out.Sample("fleetmark_read_replica_lag_seconds", {}, absl::ToDoubleSeconds(reads.lag.replay));
    out.Family("fleetmark_read_replica_lag_bytes", "WAL the primary wrote that the read replica has not replayed.",
               "gauge");
    if (reads.lag_known) out.Sample("fleetmark_read_replica_lag_bytes", {}, static_cast<double>(reads.lag.bytes));
    out.Family("fleetmark_read_server", "1 for the server read-only queries go to now: replica or primary.", "gauge");
    out.Sample("fleetmark_read_server", {{"server", "replica"}}, reads.replica ? 1 : 0);
    out.Sample("fleetmark_read_server", {{"server", "primary"}}, reads.replica ? 0 : 1);
  }
  out.WriteGauge("fleetmark_notification_listener_up",
                 "1 while the LISTEN connection is up, 0 while it reconnects or with --listen_notifications=false.",
                 sources.listener != nullptr && sources.listener->listening() ? 1 : 0);
  out.Family("fleetmark_notification_listener_reconnects_total",
             "Times the LISTEN connection was lost and opened again (each followed by a sweep).", "counter");
  out.Sample("fleetmark_notification_listener_reconnects_total", {},
             sources.listener != nullptr ? static_cast<double>(sources.listener->reconnects()) : 0);
  out.Family("fleetmark_alert_webhook_posts_total",
             "Confirmed changes POSTed to --alert_webhook_url, by result: ok, failed (after the retries), "
             "dropped (queue full or shutdown).",
             "counter");
  for (const auto& [result, counter] :
       {std::pair<const char*, const metrics::Counter*>{"ok", &sources.metrics->alert_webhook_posts.ok},
        {"failed", &sources.metrics->alert_webhook_posts.failed},
        {"dropped", &sources.metrics->alert_webhook_posts.dropped}}) {
    out.Sample("fleetmark_alert_webhook_posts_total", {{"result", result}}, static_cast<double>(counter->value()));
  }
  return out.Finish();
}

}  // namespace fleetmark::service
