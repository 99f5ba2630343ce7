// MeasureSchedulingDelay, UpperMeanBound (scheduling_delay.h).
#include "engine/measure/scheduling_delay.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include "engine/measure/verdict.h"

namespace fleetmark::engine {

double UpperMeanBound(const std::vector<double>& values) {
  const StudentMean m = StudentMeanOf(values, 0.95);
  return m.mean + m.half_width;
}

SchedulingDelay MeasureSchedulingDelay(absl::Duration spin, int wakeups, absl::Duration sleep) {
  using Clock = std::chrono::steady_clock;
  if (spin <= absl::ZeroDuration()) spin = absl::Milliseconds(100);
  if (wakeups < 1) wakeups = 100;
  if (sleep <= absl::ZeroDuration()) sleep = absl::Milliseconds(1);
  SchedulingDelay out;
  std::vector<double> gaps;
  const Clock::time_point end = Clock::now() + absl::ToChronoNanoseconds(spin);
  for (Clock::time_point last = Clock::now(); last < end;) {
    const Clock::time_point now = Clock::now();
    const double gap = std::chrono::duration<double, std::nano>(now - last).count();
    if (gap > kGapNs) gaps.push_back(gap);
    last = now;
  }
  std::vector<double> overshoots;
  const auto requested = absl::ToChronoNanoseconds(sleep);
  for (int i = 0; i < wakeups; ++i) {
    const Clock::time_point before = Clock::now();
    std::this_thread::sleep_for(requested);
    const double slept = std::chrono::duration<double, std::nano>(Clock::now() - before).count();
    overshoots.push_back(std::max(0.0, slept - static_cast<double>(requested.count())));
  }
  out.preemptions = static_cast<int>(gaps.size());
  out.preemption_bound_ns = UpperMeanBound(gaps);
  out.wakeups = static_cast<int>(overshoots.size());
  out.wakeup_bound_ns = UpperMeanBound(overshoots);
  return out;
}

}  // namespace fleetmark::engine
