#include "coordinator/alerts/alert_webhook.h"
#include "engine/common/steady_wait.h"

#include <httplib.h>

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace fleetmark::alerts {

namespace {

struct UrlParts {
  std::string scheme_host_port, path;
};

absl::StatusOr<UrlParts> SplitUrl(const std::string& url) {
  const size_t scheme_end = url.find("://");
  const std::string scheme = scheme_end == std::string::npos ? "" : url.substr(0, scheme_end);
  const size_t host_begin = scheme_end == std::string::npos ? 0 : scheme_end + 3;
  const size_t path_begin = std::min(url.find('/', host_begin), url.size());
  const std::string host_port = url.substr(host_begin, path_begin - host_begin);
  const bool bad_chars = std::any_of(
      url.begin(), url.end(), [](char c) { return static_cast<unsigned char>(c) <= 0x20 || c == 0x7f || c == '#'; });
  if ((scheme != "http" && scheme != "https") || host_port.empty() || host_port.front() == ':' ||
      host_port.find('@') != std::string::npos || bad_chars || url.size() > 2048) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--alert_webhook_url: http://HOST[:PORT][/PATH] or https://... (at most 2048 bytes, no spaces), got \"",
        url.substr(0, 128), url.size() > 128 ? "...\"" : "\""));
  }
  // The path is built in place, not assigned "/" afterwards: GCC 12 warns falsely
  // (-Wrestrict, GCC bug 105329) on assigning a literal to a std::string here.
  return UrlParts{absl::StrCat(scheme, "://", host_port),
                  path_begin < url.size() ? url.substr(path_begin) : std::string(1, '/')};
}

}  // namespace

absl::Status ValidateWebhookUrl(const std::string& url) { return SplitUrl(url).status(); }

absl::StatusOr<std::unique_ptr<AlertWebhook>> AlertWebhook::Create(const AlertWebhookOptions& options,
                                                                   AlertCounters* counters) {
  absl::StatusOr<UrlParts> parts = SplitUrl(options.url);
  if (!parts.ok()) return parts.status();
  if (options.max_attempts < 1 || options.max_queue < 1) {
    return absl::InvalidArgumentError("alert webhook: max_attempts and max_queue must be >= 1");
  }
  return std::unique_ptr<AlertWebhook>(
      new AlertWebhook(options, std::move(parts->scheme_host_port), std::move(parts->path), counters));
}

AlertWebhook::AlertWebhook(AlertWebhookOptions options, std::string scheme_host_port, std::string path,
                           AlertCounters* counters)
    : options_(std::move(options)),
      scheme_host_port_(std::move(scheme_host_port)),
      path_(std::move(path)),
      counters_(counters) {
  thread_ = std::thread([this] { Loop(); });
}

AlertWebhook::~AlertWebhook() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  thread_.join();
  absl::MutexLock lock(&mu_);
  counters_->dropped.Add(queue_.size());
}

void AlertWebhook::Post(std::string json_body) {
  absl::MutexLock lock(&mu_);
  if (stopping_ || queue_.size() >= options_.max_queue) {
    counters_->dropped.Add();
    return;
  }
  queue_.push_back(std::move(json_body));
}

bool AlertWebhook::Deliver(const std::string& body) {
  httplib::Client client(scheme_host_port_);
  const auto seconds = absl::ToInt64Seconds(options_.timeout);
  const auto usec = absl::ToInt64Microseconds(options_.timeout) % 1000000;
  client.set_connection_timeout(seconds, usec);
  client.set_read_timeout(seconds, usec);
  client.set_write_timeout(seconds, usec);
  httplib::Headers headers = {{"User-Agent", "fleetmark-coordinator"}};
  httplib::Result result = client.Post(path_, headers, body, "application/json");
  return result && result->status >= 200 && result->status < 300;
}

void AlertWebhook::Loop() {
  for (;;) {
    std::string body;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](AlertWebhook* self) ABSL_NO_THREAD_SAFETY_ANALYSIS { return self->stopping_ || !self->queue_.empty(); },
          this));
      if (stopping_) return;
      body = std::move(queue_.front());
      queue_.pop_front();
    }
    absl::Duration backoff = options_.first_backoff;
    bool delivered = false;
    for (int attempt = 1; attempt <= options_.max_attempts && !delivered; ++attempt) {
      delivered = Deliver(body);
      if (delivered || attempt == options_.max_attempts) break;
      absl::MutexLock lock(&mu_);
      // Wait out the backoff unless stopping.
      if (AwaitSteadyFor(mu_, absl::Condition(&stopping_), backoff)) break;
      backoff = std::min(2 * backoff, options_.max_backoff);
    }
    (delivered ? counters_->ok : counters_->failed).Add();
  }
}

}  // namespace fleetmark::alerts
