// Ordinary least-squares fit of a straight line y = intercept + slope·x, used for the
// memory scenario's KiB-per-task slope (S2).
//
//   LineFit fit = FitLine({1, 10, 100}, {130, 210, 950});   // fit.slope, fit.r_squared
//
// Formulas: slope = Σ(x-x̄)(y-ȳ) / Σ(x-x̄)², intercept = ȳ - slope·x̄,
// R² = 1 - SS_res / SS_tot (Montgomery, Peck & Vining, "Introduction to Linear
// Regression Analysis", 5th ed., 2012, §2.2 and §2.9). Pure; thread-safe.
#pragma once

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace fleetmark::engine {

struct LineFit {
  double slope = 0.0;
  double intercept = 0.0;
  // 1 when the points lie exactly on the line; 1 also when all y are equal (SS_tot 0
  // and SS_res 0).
  double r_squared = 0.0;
  int points = 0;
};

// InvalidArgument if the spans differ in length, hold fewer than two points, or all x
// are equal (no slope is defined); non-finite inputs are refused the same way.
absl::StatusOr<LineFit> FitLine(absl::Span<const double> x, absl::Span<const double> y);

}  // namespace fleetmark::engine
