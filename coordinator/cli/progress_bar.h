// A one-line progress bar with ETA for `fleetmark run`, redrawn in place on a terminal.
#pragma once

#include <cstdio>

#include "engine/runner/runner.h"

namespace fleetmark::cli {

class ProgressBar {
 public:
  // Draws on `stream` (normally stderr); `width` is the bar's length in cells.
  explicit ProgressBar(std::FILE* stream, int width = 30) : stream_(stream), width_(width) {}
  ~ProgressBar() { Finish(); }

  // Redraws the line for `progress`. Call from the runner's progress callback.
  void Update(const engine::RunProgress& progress);
  // Clears the line (idempotent).
  void Finish();

 private:
  std::FILE* stream_;
  int width_;
  bool drawn_ = false;
};

}  // namespace fleetmark::cli
