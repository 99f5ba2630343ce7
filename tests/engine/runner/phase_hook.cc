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
    // 10% slower per repetition from 1 ms (capped at repetition 60, ~0.3 s): a 0.5 s
    // budget holds ~40 repetitions. The runner drops drifting halves as transients, so
    // the last check sees 10..20 samples; at 10% a step, the 95% CIs of two halves of
    // 10 are ~33% apart, beyond the noise a loaded machine adds to a sleep (a slower
    // drift, 1% from 100 us, left halves that overlapped in 2 of 10 runs at load 4).
    repetitions = std::min(repetitions + 1, 60);
    absl::SleepFor(absl::Milliseconds(1) * std::pow(1.1, repetitions));
  }
}

const bool kInstalled = [] {
  engine::SetTimedRepetitionHookForTesting(&PhasedRepetition);
  return true;
}();

}  // namespace
}  // namespace fleetmark::testing
