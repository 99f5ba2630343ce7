#include "engine/child/oom_kills.h"

#include <fstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace fleetmark::engine {

std::optional<uint64_t> ReadOomKillCount(const std::string& vmstat_path) {
  std::ifstream in(vmstat_path);
  std::string line;
  while (std::getline(in, line)) {
    absl::string_view rest = line;
    if (!absl::ConsumePrefix(&rest, "oom_kill ")) continue;
    uint64_t count = 0;
    if (absl::SimpleAtoi(rest, &count)) return count;
    return std::nullopt;
  }
  return std::nullopt;
}

absl::Status SigkillStatus(absl::string_view kind, std::optional<uint64_t> before, std::optional<uint64_t> after,
                           absl::string_view stderr_tail) {
  const std::string child = absl::StrCat("child \"", kind, "\" was killed by SIGKILL");
  if (before && after && *after > *before) {
    return absl::ResourceExhaustedError(absl::StrCat(child, " from the kernel's out-of-memory killer (oom_kill ",
                                                     *before, " → ", *after, ")", stderr_tail));
  }
  if (before && after) {
    return absl::InternalError(absl::StrCat(child,
                                            " from outside the benchmark (not the out-of-memory killer: "
                                            "/proc/vmstat oom_kill stayed at ",
                                            *after, ")", stderr_tail));
  }
  return absl::ResourceExhaustedError(
      absl::StrCat(child, " (the kernel's out-of-memory killer, or a resource limit; /proc/vmstat oom_kill unreadable)",
                   stderr_tail));
}

}  // namespace fleetmark::engine
