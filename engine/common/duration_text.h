// Durations as people read them in messages and progress lines: rounded to the second
// and at most two units ("3m28s", "1h02m", "45s"), instead of absl::FormatDuration's
// "3m28.509937623s". The one formatter of every human-facing duration of the CLI.
//
//   RoundedDuration(absl::Seconds(208.51))  // "3m29s"
//   RoundedDuration(absl::Milliseconds(40)) // "0s"; negative: "-3s"; infinite: "inf"
//
// Thread-safe (pure).
#pragma once

#include <string>

#include "absl/time/time.h"

namespace fleetmark {

// `d` rounded to the nearest second: "Ns" below a minute, "MmSSs" below an hour, then
// "HhMMm" (minutes rounded); "inf" / "-inf" for infinite durations.
std::string RoundedDuration(absl::Duration d);

}  // namespace fleetmark
