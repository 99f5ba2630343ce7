#include "coordinator/changes/since.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace fleetmark::changes {

absl::StatusOr<absl::Time> ParseSince(const std::string& text, absl::Time now, const std::string& field) {
  absl::Duration back;
  int64_t days = 0;
  if (text.size() > 1 && text.back() == 'd' && absl::SimpleAtoi(text.substr(0, text.size() - 1), &days) && days >= 0 &&
      days <= 100000) {
    return now - absl::Hours(24 * days);
  }
  if (absl::ParseDuration(text, &back) && back >= absl::ZeroDuration() && back != absl::InfiniteDuration()) {
    return now - back;
  }
  absl::Time t;
  std::string error;
  if (absl::ParseTime("%Y-%m-%d", text, absl::UTCTimeZone(), &t, &error) ||
      absl::ParseTime(absl::RFC3339_full, text, absl::UTCTimeZone(), &t, &error)) {
    return t;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      field,
      ": a duration back from now (24h, 90m, 7d) or a UTC date or time (2026-12-01, 2026-12-01T10:00:00Z), got \"",
      text.substr(0, 64), text.size() > 64 ? "...\"" : "\""));
}

}  // namespace fleetmark::changes
