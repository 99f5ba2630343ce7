#include "tests/engine/runner/phase_hook.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/time/clock.h"
#include "engine/runner/batch_slice.h"

namespace fleetmark::testing {
namespace {

void PhasedRepetition(const v1::CaseSpec& spec) {
  static int repetitions = 0;
  const std::string& label = spec.strategy().label();
  if (label == kPhasedLabel) {
    absl::SleepFor(++repetitions <= kFastRepetitions ? absl::Microseconds(100) : absl::Milliseconds(1));
  } else if (label == kDriftingLabel) {
    // 1% slower per repetition (capped at repetition 600, ~39 ms).
    repetitions = std::min(repetitions + 1, 600);
    absl::SleepFor(absl::Microseconds(100) * std::pow(1.01, repetitions));
  }
}

const bool kInstalled = [] {
  engine::SetTimedRepetitionHookForTesting(&PhasedRepetition);
  return true;
}();

}  // namespace
}  // namespace fleetmark::testing
