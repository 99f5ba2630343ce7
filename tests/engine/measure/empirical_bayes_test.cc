// The empirical-Bayes prior (empirical_bayes.h) on variances drawn from its own model.
#include "engine/measure/empirical_bayes.h"

#include <boost/math/special_functions/trigamma.hpp>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace fleetmark::engine {
namespace {

TEST(InverseTrigammaTest, InvertsTrigamma) {
  for (double y : {0.01, 0.3, 1.0, 2.5, 10.0, 400.0}) {
    EXPECT_NEAR(InverseTrigamma(boost::math::trigamma(y)), y, y * 1e-6) << y;
  }
  EXPECT_TRUE(std::isnan(InverseTrigamma(0)));
  EXPECT_TRUE(std::isnan(InverseTrigamma(-1)));
}

// Draws G units: σ_g² = s0² · d0 / χ²(d0) (the scaled inverse chi-square prior), then
// s_g² = σ_g² · χ²(d_g) / d_g.
std::vector<SampleVariance> Draw(uint32_t seed, int units, double s0_squared, double d0, double d_g) {
  std::mt19937 engine(seed);
  std::chi_squared_distribution<double> prior(d0), sampling(d_g);
  std::vector<SampleVariance> out;
  for (int g = 0; g < units; ++g) {
    const double true_variance = std::isinf(d0) ? s0_squared : s0_squared * d0 / prior(engine);
    out.push_back({.variance = true_variance * sampling(engine) / d_g, .dof = d_g});
  }
  return out;
}

TEST(FitVariancePriorTest, RecoversThePriorOfWidelyVaryingUnits) {
  // d0 = 3: the units' true variances differ several-fold; 4000 units of 6 dof each.
  const VariancePrior p = FitVariancePrior(Draw(5, 4000, 0.0025, 3, 6));
  EXPECT_NEAR(p.dof, 3, 0.6);
  EXPECT_NEAR(p.variance, 0.0025, 0.0025 * 0.15);
}

TEST(FitVariancePriorTest, UnitsThatAgreeWithinSamplingGetALargeOrInfinitePrior) {
  // Every unit has the same true variance: only sampling varies the s_g².
  const VariancePrior p = FitVariancePrior(Draw(9, 4000, 0.0004, std::numeric_limits<double>::infinity(), 6));
  EXPECT_GT(p.dof, 50);
  EXPECT_NEAR(p.variance, 0.0004, 0.0004 * 0.05);
}

TEST(FitVariancePriorTest, TooFewUnitsLeaveEachIntervalToItsOwnVariance) {
  EXPECT_EQ(FitVariancePrior({}).dof, 0);
  EXPECT_EQ(FitVariancePrior({}).variance, 0);
  const VariancePrior one = FitVariancePrior({{.variance = 0.01, .dof = 4}});
  EXPECT_EQ(one.dof, 0);
  EXPECT_DOUBLE_EQ(one.variance, 0.01);
  // Zero, negative, NaN variances and units without dof are left out.
  const VariancePrior rest = FitVariancePrior({{.variance = 0, .dof = 4},
                                               {.variance = -1, .dof = 4},
                                               {.variance = std::nan(""), .dof = 4},
                                               {.variance = 0.5, .dof = 0},
                                               {.variance = 0.02, .dof = 2}});
  EXPECT_EQ(rest.dof, 0);
  EXPECT_DOUBLE_EQ(rest.variance, 0.02);
}

TEST(FitVariancePriorTest, TwoEqualUnitsAgree) {
  // Identical variances: no excess spread, d0 = +inf, s0² = exp(ē) (the sampling bias of
  // ln s² corrected: ψ(1) − ln 1 = −0.5772 for 2 dof).
  const VariancePrior p = FitVariancePrior({{.variance = 0.01, .dof = 2}, {.variance = 0.01, .dof = 2}});
  EXPECT_TRUE(std::isinf(p.dof));
  EXPECT_NEAR(p.variance, 0.01 * std::exp(0.5772156649), 1e-9);
}

}  // namespace
}  // namespace fleetmark::engine
