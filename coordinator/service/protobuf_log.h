// Rate-limits protobuf's own log lines ("[libprotobuf ERROR ...] String field ... contains
// invalid UTF-8 data"), which it writes once per unparseable message: a fuzzer or a broken
// client could otherwise fill the coordinator's log (1 500 lines from one fuzz run).
//
// The first `burst` lines pass; after that one line per `interval`, which says how many
// were suppressed since the last one printed. FATAL lines always pass.
//
//   InstallRateLimitedProtobufLog();  // in main(), before serving
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace fleetmark::service {

// The decision, apart from protobuf and the clock (tests drive it with their own times).
// Thread-safe.
class LogRateLimiter {
 public:
  LogRateLimiter(int burst, absl::Duration interval) : burst_(burst), interval_(interval) {}

  // The line to print for `line` logged at `now` (steady time: SteadyNow) ("" + "(N similar lines suppressed) "
  // prefix when lines were dropped before it), or nullopt to drop it.
  std::optional<std::string> Admit(absl::Time now, const std::string& line);

 private:
  const int burst_;
  const absl::Duration interval_;
  absl::Mutex mu_;
  int printed_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time last_printed_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  int64_t suppressed_ ABSL_GUARDED_BY(mu_) = 0;
};

// Installs a protobuf log handler (google::protobuf::SetLogHandler) writing to stderr
// through a LogRateLimiter(burst, interval). Call once, before other threads log.
void InstallRateLimitedProtobufLog(int burst = 10, absl::Duration interval = absl::Minutes(1));

}  // namespace fleetmark::service
