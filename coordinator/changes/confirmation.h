// Confirmed changes (issue 14, item 5): when the newest nightly point of a case on a
// device starts a change segment, and what a confirmation run of that case on the same
// device says about it. Pure functions; the coordinator's ChangeMonitor
// (coordinator/service/change_monitor.h) applies them to stored series.
//
//   auto suspected = NewestPointStartsChange(medians, breaks, /*noise=*/0.01);
//   if (suspected) ... submit a confirmation run ...
//   ChangeVerdict v = JudgeConfirmation(old_ns, new_ns, confirmation_median_ns, 0.01);
//
// Thread-safety: pure functions; any thread.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace fleetmark::changes {

// The states of a change (table `changes`, migration 0012).
inline constexpr char kSuspected[] = "suspected";
inline constexpr char kConfirmed[] = "confirmed";
inline constexpr char kNotReproduced[] = "not_reproduced";
inline constexpr char kUnconfirmed[] = "unconfirmed";

// True for one of the four state names above.
bool IsChangeState(const std::string& state);

// A change the newest point starts.
struct SuspectedChange {
  double old_level_ns = 0;         // geometric mean of the segment before the newest point
  double new_level_ns = 0;         // the newest point's median
  double min_relative_change = 0;  // MinRelativeChange at this noise (0.03 = 3 %)
};

// Whether the newest point of `medians_ns` (oldest first, one per nightly run; <= 0 or
// non-finite = no ok result) starts a change segment: DetectChangePointsInSegments with
// `breaks` (fingerprint segments, FingerprintBreaks), the device's `noise` (fraction, 0 =
// unknown) and a last segment of one point, reporting the newest index. nullopt when it
// does not, or when the newest point is not ok. The old level is the geometric mean of
// the points since the previous change point or fingerprint break.
std::optional<SuspectedChange> NewestPointStartsChange(const std::vector<double>& medians_ns,
                                                       const std::vector<size_t>& breaks, double noise);

struct ChangeVerdict {
  std::string state;   // kConfirmed or kNotReproduced
  std::string reason;  // e.g. "confirmation 2.05 ms: +102.1 % from the old level 1.01 ms (at least 3.0 %), ..."
};

// The verdict of a confirmation run (all levels in ns, > 0): confirmed when the
// confirmation median c is closer in log space to the new level than to the old one,
// |ln c − ln new| < |ln c − ln old|, and still beyond the threshold from the old level,
// |ln c − ln old| >= ln(1 + MinRelativeChange(noise)); otherwise not reproduced.
ChangeVerdict JudgeConfirmation(double old_level_ns, double new_level_ns, double confirmation_ns, double noise);

}  // namespace fleetmark::changes
