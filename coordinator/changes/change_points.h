// Change-point detection for a case's history (median per nightly run), shared by the
// web view's History (/api/v1/history) and the coordinator's confirmed changes
// (confirmation.h): binary segmentation with a normal mean-shift cost on log(median) and a BIC-style penalty.
//
//   std::vector<size_t> at = DetectChangePoints({10, 10.1, 9.9, 14, 14.2, 13.9});  // {3}
//
// Method: Scott & Knott (1974) binary segmentation; cost of a segment = sum of squared
// deviations from its mean; a split is kept when it lowers the cost by more than
// 2·σ²·ln(n) (Schwarz/BIC penalty as in Killick, Fearnhead & Eckley 2012, §1), with σ
// estimated robustly from first differences: σ = MAD(Δx) / (0.6745·√2) (Fryzlewicz
// 2014, WBS). Working on log(median) makes shifts relative. Pure function, thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace fleetmark::changes {

struct ChangePointOptions {
  // Fewest points on each side of a change.
  size_t min_segment = 2;
  // Shifts smaller than this relative change of the segment medians are ignored
  // (0.03 = 3%), so a perfectly quiet series does not flag tiny moves.
  double min_relative_change = 0.03;
  // The device's noise score as a fraction (store/agent_health.h; 0.02 = 2 %), 0 =
  // unknown. A noisier device needs a bigger jump: a shift must reach
  // max(min_relative_change, kNoiseChangeMultiple × noise), and the BIC penalty's σ is
  // at least the noise (σ = max(MAD estimate, 0.1 %, noise)).
  double noise = 0;
  // Fewest points of the series' last segment; 0 = min_segment. The coordinator's scan
  // uses 1, so the newest nightly point alone can start a (suspected) change that a
  // confirmation run then checks.
  size_t min_last_segment = 0;
};

// How many noise scores a change must exceed (see ChangePointOptions::noise).
inline constexpr double kNoiseChangeMultiple = 3;

// The smallest relative change (0.03 = 3 %) between segment levels that counts on a
// device: max(options.min_relative_change, kNoiseChangeMultiple × options.noise). The one
// threshold rule of History, the scan and the confirmation verdict.
double MinRelativeChange(const ChangePointOptions& options);

// Where a new fingerprint segment starts in a series of points' device fingerprint
// hashes (oldest first): indices i whose hash differs from the last known one before it.
// An empty hash (an older agent's result) is unknown: never a break, and skipped when
// comparing.
std::vector<size_t> FingerprintBreaks(const std::vector<std::string>& hashes);

// Indices i (ascending) where a new level starts: points[i-1] and points[i] lie in
// different segments. Non-positive or non-finite values are skipped for fitting and
// never reported. Empty for fewer than 2·min_segment usable points.
std::vector<size_t> DetectChangePoints(const std::vector<double>& medians, const ChangePointOptions& options = {});

// As DetectChangePoints, with the series cut beforehand at `breaks` (ascending indices
// where a new segment starts, e.g. where the device fingerprint changed: a new kernel,
// governor or engine): each piece is searched alone, so a level shift at a break is the
// device's change, never reported as a change point. Indices refer to `medians`.
// options.min_last_segment applies to the last piece only.
std::vector<size_t> DetectChangePointsInSegments(const std::vector<double>& medians, const std::vector<size_t>& breaks,
                                                 const ChangePointOptions& options = {});

}  // namespace fleetmark::changes
