// Reconnect delays: exponential backoff with "full jitter".
//
// Attempt n (0-based) waits a uniform random time in [min_delay, ceiling(n)] where
// ceiling(n) = min(max_delay, initial_delay * multiplier^n) — the "Full Jitter" scheme of
// M. Brooker, "Exponential Backoff And Jitter", AWS Architecture Blog, 2015. The floor
// keeps a flapping coordinator from being hammered in a hot loop.
//
//   Backoff backoff(BackoffOptions{}, absl::BitGenRef(gen));
//   const absl::Duration delay = backoff.NextDelay();   // after a failed attempt; the agent waits it
//   clock.AwaitWithDeadline(mu, absl::Condition(&stop), clock.SteadyNow() + delay);   // on its Clock
//   backoff.Reset();                       // after a successful session
#pragma once

#include <cstdint>

#include "absl/random/bit_gen_ref.h"
#include "absl/status/status.h"
#include "absl/time/time.h"

namespace fleetmark::agent {

struct BackoffOptions {
  absl::Duration initial_delay = absl::Milliseconds(500);  // ceiling of attempt 0
  absl::Duration max_delay = absl::Seconds(30);            // cap on every ceiling
  absl::Duration min_delay = absl::Milliseconds(50);       // floor of every delay
  double multiplier = 2.0;                                 // ceiling growth per attempt
};

// Checks 0 < min_delay <= initial_delay <= max_delay <= 1 h and 1 <= multiplier <= 10;
// InvalidArgument names the field, its value and the allowed range — max_delay checked
// first, so a bad cap is blamed on the cap, not on the delays under it.
absl::Status ValidateBackoffOptions(const BackoffOptions& options);

// Not thread-safe: one Backoff per reconnect loop. `gen` must outlive the Backoff.
class Backoff {
 public:
  // `options` must pass ValidateBackoffOptions.
  Backoff(const BackoffOptions& options, absl::BitGenRef gen);

  // The delay to wait before the next attempt; advances the attempt counter.
  absl::Duration NextDelay();

  // The ceiling the next NextDelay() draws under (for logs and tests).
  absl::Duration CurrentCeiling() const;

  // Back to attempt 0 (call once a session was established).
  void Reset() { attempt_ = 0; }

  uint32_t attempt() const { return attempt_; }

 private:
  BackoffOptions options_;
  absl::BitGenRef gen_;
  uint32_t attempt_ = 0;
};

}  // namespace fleetmark::agent
