// FitVariancePrior, InverseTrigamma (empirical_bayes.h).
#include "engine/measure/empirical_bayes.h"

#include <boost/math/special_functions/digamma.hpp>
#include <boost/math/special_functions/polygamma.hpp>
#include <boost/math/special_functions/trigamma.hpp>
#include <algorithm>
#include <cmath>
#include <limits>

namespace fleetmark::engine {

double InverseTrigamma(double x) {
  if (!(x > 0)) return std::numeric_limits<double>::quiet_NaN();
  if (x > 1e7) return 1 / std::sqrt(x);  // ψ'(y) ≈ 1/y² for small y
  if (x < 1e-6) return 1 / x;            // ψ'(y) ≈ 1/y for large y
  // Newton's method on 1/ψ'(y) (Smyth's appendix: monotone convergence from y0).
  double y = 0.5 + 1 / x;
  for (int i = 0; i < 50; ++i) {
    const double tri = boost::math::trigamma(y);
    const double step = tri * (1 - tri / x) / boost::math::polygamma(2, y);
    y += step;
    if (-step / y < 1e-8) break;
  }
  return y;
}

VariancePrior FitVariancePrior(const std::vector<SampleVariance>& units) {
  std::vector<SampleVariance> usable;
  for (const SampleVariance& u : units) {
    if (u.variance > 0 && std::isfinite(u.variance) && u.dof > 0 && std::isfinite(u.dof)) usable.push_back(u);
  }
  if (usable.empty()) return {};
  if (usable.size() == 1) return {.variance = usable.front().variance, .dof = 0};
  // A variance of rounding size (exact ratios up to the last bit) would dominate the
  // spread of the logarithms: raised to 1e-5 times the median, as limma's fitFDist does.
  std::vector<double> sorted;
  for (const SampleVariance& u : usable) sorted.push_back(u.variance);
  std::sort(sorted.begin(), sorted.end());
  const size_t mid = sorted.size() / 2;
  const double median = sorted.size() % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  for (SampleVariance& u : usable) u.variance = std::max(u.variance, 1e-5 * median);
  const double g = static_cast<double>(usable.size());
  std::vector<double> e;
  double mean = 0;
  for (const SampleVariance& u : usable) {
    e.push_back(std::log(u.variance) - boost::math::digamma(u.dof / 2) + std::log(u.dof / 2));
    mean += e.back() / g;
  }
  double excess = 0;  // mean of (e_g − ē)² · G/(G−1) − ψ'(d_g/2): the estimate of ψ'(d0/2)
  for (size_t i = 0; i < usable.size(); ++i) {
    excess += ((e[i] - mean) * (e[i] - mean) * g / (g - 1) - boost::math::trigamma(usable[i].dof / 2)) / g;
  }
  if (!(excess > 0)) return {.variance = std::exp(mean), .dof = std::numeric_limits<double>::infinity()};
  const double d0 = 2 * InverseTrigamma(excess);
  return {.variance = std::exp(mean + boost::math::digamma(d0 / 2) - std::log(d0 / 2)), .dof = d0};
}

}  // namespace fleetmark::engine
