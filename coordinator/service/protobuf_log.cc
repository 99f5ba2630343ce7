#include "coordinator/service/protobuf_log.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "engine/common/log.h"
#include "engine/common/steady_wait.h"
#include "google/protobuf/stubs/logging.h"

namespace fleetmark::service {
namespace {

LogRateLimiter* limiter = nullptr;  // set once by InstallRateLimitedProtobufLog

const char* LevelName(google::protobuf::LogLevel level) {
  switch (level) {
    case google::protobuf::LOGLEVEL_INFO:
      return "INFO";
    case google::protobuf::LOGLEVEL_WARNING:
      return "WARNING";
    case google::protobuf::LOGLEVEL_ERROR:
      return "ERROR";
    default:
      return "FATAL";
  }
}

// Through the daemon's log (engine/common/log.h: time and level, as every other line).
// The rate limit runs on steady time: a wall clock set back would silence it.
void Handler(google::protobuf::LogLevel level, const char* filename, int line, const std::string& message) {
  // protobuf's default format: "[libprotobuf ERROR file:line] message".
  const std::string text = absl::StrCat("[libprotobuf ", LevelName(level), " ", filename, ":", line, "] ", message);
  const LogLevel ours = level == google::protobuf::LOGLEVEL_INFO      ? LogLevel::kInfo
                        : level == google::protobuf::LOGLEVEL_WARNING ? LogLevel::kWarning
                                                                      : LogLevel::kError;
  if (level >= google::protobuf::LOGLEVEL_FATAL) {
    Log(ours, text);
    return;
  }
  if (std::optional<std::string> admitted = limiter->Admit(SteadyNow(), text)) Log(ours, *admitted);
}

}  // namespace

std::optional<std::string> LogRateLimiter::Admit(absl::Time now, const std::string& line) {
  absl::MutexLock lock(&mu_);
  if (printed_ >= burst_ && now - last_printed_ < interval_) {
    ++suppressed_;
    return std::nullopt;
  }
  ++printed_;
  last_printed_ = now;
  if (suppressed_ == 0) return line;
  std::string out =
      absl::StrCat("(", suppressed_, " more protobuf log line", suppressed_ == 1 ? "" : "s", " suppressed) ", line);
  suppressed_ = 0;
  return out;
}

void InstallRateLimitedProtobufLog(int burst, absl::Duration interval) {
  static LogRateLimiter instance(burst, interval);
  limiter = &instance;
  google::protobuf::SetLogHandler(&Handler);
}

}  // namespace fleetmark::service
