#include "absl/strings/str_cat.h"
#include "engine/strategies/strategy.h"

namespace fleetmark::engine {

absl::StatusOr<IoMode> ParseIoMode(std::string_view text) {
  if (text == "blocking") return IoMode::kBlocking;
  if (text == "suspending") return IoMode::kSuspending;
  return absl::InvalidArgumentError(
      absl::StrCat("io_mode: \"blocking\" or \"suspending\", got \"", std::string(text), "\""));
}

std::string_view IoModeName(IoMode mode) { return mode == IoMode::kSuspending ? "suspending" : "blocking"; }

}  // namespace fleetmark::engine
