#include "engine/common/duration_text.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace fleetmark {

std::string RoundedDuration(absl::Duration d) {
  if (d == absl::InfiniteDuration()) return "inf";
  if (d == -absl::InfiniteDuration()) return "-inf";
  if (d < absl::ZeroDuration()) {
    const std::string positive = RoundedDuration(-d);
    return positive == "0s" ? positive : absl::StrCat("-", positive);
  }
  const int64_t s = absl::ToInt64Seconds(d + absl::Milliseconds(500));
  if (s < 60) return absl::StrFormat("%ds", s);
  if (s < 3600) return absl::StrFormat("%dm%02ds", s / 60, s % 60);
  const int64_t m = (s + 30) / 60;
  return absl::StrFormat("%dh%02dm", m / 60, m % 60);
}

}  // namespace fleetmark
