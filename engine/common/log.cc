#include "engine/common/log.h"

#include <unistd.h>

#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "engine/common/text.h"

namespace fleetmark {

void Log(LogLevel level, absl::string_view message) {
  absl::string_view name = level == LogLevel::kInfo ? "INFO" : level == LogLevel::kWarning ? "WARNING" : "ERROR";
  const std::string line =
      absl::StrCat(absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(), absl::UTCTimeZone()), " ", name, " ",
                   EscapeForTerminal(std::string_view(message.data(), message.size())), "\n");
  // One write keeps lines from different threads whole; a failed log write has
  // nowhere to be reported.
  [[maybe_unused]] ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
}

}  // namespace fleetmark
