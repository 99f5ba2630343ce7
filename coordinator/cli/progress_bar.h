// A one-line progress bar with ETA for `fleetmark run`, redrawn in place on a terminal.
// The ETA is a range from the plan's cost (engine/plan/cost.h EstimateRemaining:
// expected and worst case, raised by the run's own rate when it is slower), so the
// first one is honest: the runner's rate assumes the fewest processes per case.
// Not thread-safe (the runner's progress callback).
#pragma once

#include <cstdio>
#include <optional>
#include <utility>

#include "engine/plan/cost.h"
#include "engine/runner/runner.h"

namespace fleetmark::cli {

class ProgressBar {
 public:
  // Draws on `stream` (normally stderr, not owned); `cost`: the run's (nullopt: the ETA
  // is the runner's rate alone, "?" before the first slice); `width` is the bar's
  // length in cells.
  explicit ProgressBar(std::FILE* stream, std::optional<engine::PlanCost> cost = std::nullopt, int width = 30)
      : stream_(stream), cost_(std::move(cost)), width_(width) {}
  ~ProgressBar() { Finish(); }

  // Redraws the line for `progress`. Call from the runner's progress callback.
  void Update(const engine::RunProgress& progress);
  // Clears the line (idempotent).
  void Finish();

 private:
  std::FILE* stream_;
  std::optional<engine::PlanCost> cost_;
  int width_;
  bool drawn_ = false;
};

}  // namespace fleetmark::cli
