#include "tests/engine/runner/hang_hook.h"

#include <unistd.h>

#include "engine/runner/batch_slice.h"

namespace fleetmark::testing {
namespace {

// Runs in the child measuring a slice (one process per slice, so the count restarts).
void HangInTheThirdRepetition(const v1::CaseSpec& spec) {
  static int repetitions = 0;
  if (spec.strategy().label() != kHangLabel || ++repetitions < 3) return;
  while (true) ::pause();  // only SIGKILL (the watchdog or a cancellation) ends it
}

const bool kInstalled = [] {
  engine::SetRepetitionHookForTesting(&HangInTheThirdRepetition);
  return true;
}();

}  // namespace
}  // namespace fleetmark::testing
