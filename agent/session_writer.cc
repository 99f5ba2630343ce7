#include "agent/session_writer.h"

#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "agent/log.h"
#include "engine/measure/process_stats.h"

namespace fleetmark::agent {

using fleetmark::v1::AgentMessage;

SessionWriter::SessionWriter(SessionStream* stream, const Spool* spool, const Clock& clock, absl::Time welcome_deadline,
                             std::function<void()> on_result_sent)
    : stream_(stream),
      spool_(spool),
      clock_(clock),
      welcome_deadline_(welcome_deadline),
      on_result_sent_(std::move(on_result_sent)) {}

SessionWriter::~SessionWriter() {
  Close();
  Join();
}

void SessionWriter::Enqueue(Outbound item) {
  absl::MutexLock lock(&mu_);
  if (!closed_) queue_.push_back(std::move(item));
}

void SessionWriter::SetWelcomed(absl::Duration heartbeat_interval) {
  absl::MutexLock lock(&mu_);
  welcomed_ = true;
  heartbeat_interval_ = heartbeat_interval;
  next_heartbeat_ = clock_.SteadyNow();  // first heartbeat at once: fresh RSS/CPU/spool figures
}

void SessionWriter::Close() {
  absl::MutexLock lock(&mu_);
  closed_ = true;
  queue_.clear();
}

void SessionWriter::Start() {
  writer_ = std::thread([this] { WriterLoop(); });
}

void SessionWriter::Join() {
  if (writer_.joinable()) writer_.join();
}

AgentMessage SessionWriter::MakeHeartbeat() const {
  AgentMessage message;
  fleetmark::v1::Heartbeat* heartbeat = message.mutable_heartbeat();
  heartbeat->set_unix_time_ns(absl::ToUnixNanos(clock_.Now()));
  if (absl::StatusOr<uint64_t> rss = engine::ReadRssBytes(); rss.ok()) {
    heartbeat->set_rss_bytes(*rss);
  }
  if (absl::StatusOr<engine::ResourceUsage> usage = engine::ReadResourceUsage(); usage.ok()) {
    heartbeat->set_cpu_seconds(absl::ToDoubleSeconds(usage->user_cpu + usage->system_cpu));
  }
  heartbeat->set_spooled_results(static_cast<uint32_t>(spool_->pending()));
  return message;
}

void SessionWriter::WriterLoop() {
  while (true) {
    Outbound item;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return closed_ || (!queue_.empty() && !welcomed_) ||
               (welcomed_ && (!queue_.empty() || clock_.SteadyNow() >= next_heartbeat_));
      };
      while (!ready()) {
        const absl::Time deadline = welcomed_ ? next_heartbeat_ : welcome_deadline_;
        if (clock_.SteadyNow() >= deadline) break;
        clock_.AwaitWithDeadline(mu_, absl::Condition(&ready), deadline);
      }
      if (closed_) return;
      if (!welcomed_ && queue_.empty()) {
        Log(LogLevel::kWarning, "no Welcome from the coordinator in time; abandoning the session");
        stream_->Cancel();
        return;
      }
      if (welcomed_ && clock_.SteadyNow() >= next_heartbeat_) {
        item = MakeHeartbeat();
        next_heartbeat_ = clock_.SteadyNow() + heartbeat_interval_;
      } else {
        item = std::move(queue_.front());
        queue_.pop_front();
      }
    }
    AgentMessage message;
    bool is_result = false;
    if (auto* id = std::get_if<std::string>(&item)) {
      absl::StatusOr<fleetmark::v1::CaseResult> result = spool_->Read(*id);
      if (absl::IsNotFound(result.status())) continue;  // acked meanwhile
      if (!result.ok()) {
        Log(LogLevel::kError, absl::StrCat("spool: ", result.status().ToString()));
        continue;
      }
      *message.mutable_result() = *std::move(result);
      is_result = true;
    } else {
      message = std::move(std::get<AgentMessage>(item));
    }
    if (!stream_->Write(message)) return;  // the stream broke; the reader sees it too
    if (is_result && on_result_sent_) on_result_sent_();
  }
}

}  // namespace fleetmark::agent
