// Energy from sampled power by the trapezoidal rule (composite trapezoid, e.g. Burden &
// Faires, Numerical Analysis, 9th ed., section 4.4): exact when power is constant or
// changes linearly between samples; for a sensor that holds each value until its next
// update the error of one interval is at most |P(t1) - P(t0)| · (t1 - t0) / 2.
//
//   PowerIntegral integral;
//   FLEETMARK_RETURN_IF_ERROR(integral.Add(0.0, 2.5));   // seconds, watts
//   FLEETMARK_RETURN_IF_ERROR(integral.Add(1.0, 2.7));   // integral.joules() == 2.6
#pragma once

#include "absl/status/status.h"

namespace fleetmark::engine::energy {

// Not thread-safe: one owner adds the samples.
class PowerIntegral {
 public:
  // Adds a sample of `watts` at `at_s` seconds (any fixed origin, steady clock).
  // InvalidArgument (the integral unchanged) for non-finite or negative watts, a
  // non-finite time, or a time not after the previous sample's.
  absl::Status Add(double at_s, double watts);

  double joules() const { return joules_; }    // 0 before two samples
  double seconds() const { return seconds_; }  // time between the first and last sample
  int samples() const { return samples_; }

 private:
  double joules_ = 0;
  double seconds_ = 0;
  double last_at_s_ = 0;
  double last_watts_ = 0;
  int samples_ = 0;
};

}  // namespace fleetmark::engine::energy
