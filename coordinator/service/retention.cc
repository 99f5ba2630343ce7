#include "coordinator/service/retention.h"

#include <cstdint>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "engine/common/text.h"

namespace fleetmark::service {
namespace {

constexpr char kRange[] = "1h to 36500d";

}  // namespace

absl::Status CheckRetention(const std::string& field, absl::Duration retention) {
  if (retention >= kMinRetention && retention <= kMaxRetention) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", kRange, ", got ", absl::FormatDuration(retention)));
}

absl::StatusOr<absl::Duration> ParseRetention(const std::string& field, const std::string& text) {
  absl::Duration retention;
  bool parsed = false;
  if (text.size() >= 2 && (text.back() == 'd' || text.back() == 'w')) {
    int64_t count = 0;
    if (absl::SimpleAtoi(text.substr(0, text.size() - 1), &count) && count > 0 && count <= 36500) {
      retention = absl::Hours(24 * count * (text.back() == 'w' ? 7 : 1));
      parsed = true;
    }
  } else {
    parsed = absl::ParseDuration(text, &retention);
  }
  if (!parsed) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": a duration such as 400d, 8w or 720h (", kRange,
                                                   "), got \"", EscapeForTerminal(text.substr(0, 64)), "\""));
  }
  if (absl::Status in_range = CheckRetention(field, retention); !in_range.ok()) return in_range;
  return retention;
}

}  // namespace fleetmark::service
