// The coordinator's alert webhook (--alert_webhook_url): each confirmed change is POSTed
// as JSON (change_json.h, ChangeAlertJson) to one URL, from a background thread with bounded retries
// and backoff, so a slow or dead receiver never blocks the coordinator.
//
//   auto hook = AlertWebhook::Create({.url = "http://127.0.0.1:9000/fleetmark"}, &counters);
//   (*hook)->Post(ChangeAlertJson(change, "http://127.0.0.1:8080"));  // returns at once
//
// Delivery: up to max_attempts POSTs per alert (a 2xx answer ends it; a connection
// error, a timeout or another status is retried after a backoff doubling from
// first_backoff to max_backoff); at most max_queue alerts wait, newer ones beyond that
// are dropped. Each alert ends counted once in AlertCounters: ok, failed (every attempt
// failed) or dropped (queue full, or still queued at shutdown).
//
// Thread-safety: Post may be called from any thread.
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "coordinator/service/metrics.h"
#include "coordinator/alerts/change_json.h"

namespace fleetmark::alerts {

struct AlertWebhookOptions {
  // http://HOST[:PORT][/PATH] or https://...; required.
  std::string url;
  int max_attempts = 5;
  absl::Duration first_backoff = absl::Milliseconds(500);
  absl::Duration max_backoff = absl::Seconds(8);
  absl::Duration timeout = absl::Seconds(5);  // connect, read and write, per attempt
  size_t max_queue = 1000;
};

// fleetmark_alert_webhook_posts_total{result}: not owned, must outlive the webhook.
struct AlertCounters {
  metrics::Counter ok, failed, dropped;
};

// InvalidArgument naming --alert_webhook_url unless `url` is http(s)://HOST[:PORT][/PATH]
// (at most 2048 bytes, no spaces, control characters, user info or fragment).
absl::Status ValidateWebhookUrl(const std::string& url);

class AlertWebhook {
 public:
  // ValidateWebhookUrl's errors.
  static absl::StatusOr<std::unique_ptr<AlertWebhook>> Create(const AlertWebhookOptions& options,
                                                              AlertCounters* counters);
  // Stops the thread: the attempt in flight ends (bounded by the timeout), queued
  // alerts are counted dropped.
  ~AlertWebhook();

  // Queues `json_body` for delivery; never blocks.
  void Post(std::string json_body);

 private:
  AlertWebhook(AlertWebhookOptions options, std::string scheme_host_port, std::string path, AlertCounters* counters);
  void Loop();
  bool Deliver(const std::string& body);  // one attempt

  const AlertWebhookOptions options_;
  const std::string scheme_host_port_, path_;
  AlertCounters* const counters_;
  absl::Mutex mu_;
  std::deque<std::string> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace fleetmark::alerts
