#include "engine/scenarios/smaps_rollup.h"

#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "engine/measure/process_stats.h"
#include "engine/scenarios/meminfo.h"

namespace fleetmark::engine {

absl::StatusOr<MemoryFootprint> ParseSmapsRollup(absl::string_view text) {
  MemoryFootprint m;
  bool has_rss = false, has_pss = false;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;
    const absl::string_view key = line.substr(0, colon);
    absl::string_view value = absl::StripAsciiWhitespace(line.substr(colon + 1));
    if (!absl::ConsumeSuffix(&value, " kB")) continue;
    uint64_t kib = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(value), &kib)) continue;
    const uint64_t bytes = kib * 1024;
    if (key == "Rss") {
      m.rss_bytes = bytes;
      has_rss = true;
    } else if (key == "Pss") {
      m.pss_bytes = bytes;
      has_pss = true;
    } else if (key == "Private_Clean" || key == "Private_Dirty") {
      m.uss_bytes += bytes;
    }
  }
  if (!has_rss) return absl::InvalidArgumentError("smaps_rollup: no \"Rss:\" line");
  m.has_rollup = has_pss;
  return m;
}

absl::StatusOr<uint64_t> ReadKernelStackBytes() {
  const std::optional<uint64_t> bytes = ReadMeminfoBytes("KernelStack:");
  if (!bytes) return absl::InternalError("/proc/meminfo has no KernelStack line");
  return *bytes;
}

absl::StatusOr<MemoryFootprint> ReadMemoryFootprint() {
  std::ifstream in("/proc/self/smaps_rollup");
  if (in) {
    std::stringstream text;
    text << in.rdbuf();
    absl::StatusOr<MemoryFootprint> parsed = ParseSmapsRollup(text.str());
    if (parsed.ok()) return parsed;
  }
  absl::StatusOr<uint64_t> rss = ReadRssBytes();
  if (!rss.ok()) {
    return absl::InternalError(
        absl::StrCat("cannot read /proc/self/smaps_rollup nor /proc/self/statm: ", rss.status().message()));
  }
  MemoryFootprint m;
  m.rss_bytes = *rss;
  return m;
}

}  // namespace fleetmark::engine
