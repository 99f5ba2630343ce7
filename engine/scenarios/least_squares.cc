#include "engine/scenarios/least_squares.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace fleetmark::engine {

absl::StatusOr<LineFit> FitLine(absl::Span<const double> x, absl::Span<const double> y) {
  if (x.size() != y.size()) {
    return absl::InvalidArgumentError(absl::StrCat("FitLine: x has ", x.size(), " values but y has ", y.size()));
  }
  if (x.size() < 2) {
    return absl::InvalidArgumentError(absl::StrCat("FitLine: at least 2 points needed, got ", x.size()));
  }
  const double n = static_cast<double>(x.size());
  double sum_x = 0, sum_y = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!std::isfinite(x[i]) || !std::isfinite(y[i])) {
      return absl::InvalidArgumentError(absl::StrCat("FitLine: point ", i, " is not finite"));
    }
    sum_x += x[i];
    sum_y += y[i];
  }
  const double mean_x = sum_x / n, mean_y = sum_y / n;
  double sxx = 0, sxy = 0, syy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double dx = x[i] - mean_x, dy = y[i] - mean_y;
    sxx += dx * dx;
    sxy += dx * dy;
    syy += dy * dy;
  }
  if (sxx == 0) {
    return absl::InvalidArgumentError("FitLine: all x are equal, the slope is undefined");
  }
  LineFit fit;
  fit.points = static_cast<int>(x.size());
  fit.slope = sxy / sxx;
  fit.intercept = mean_y - fit.slope * mean_x;
  double ss_res = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double r = y[i] - (fit.intercept + fit.slope * x[i]);
    ss_res += r * r;
  }
  fit.r_squared = syy == 0 ? (ss_res == 0 ? 1.0 : 0.0) : 1.0 - ss_res / syy;
  return fit;
}

}  // namespace fleetmark::engine
