#include "engine/scenarios/least_squares.h"

#include <vector>

#include "gtest/gtest.h"

namespace fleetmark::engine {
namespace {

TEST(FitLineTest, ExactLine) {
  const std::vector<double> x = {1, 10, 100, 1000};
  std::vector<double> y;
  for (double v : x) y.push_back(120 + 16.5 * v);
  absl::StatusOr<LineFit> fit = FitLine(x, y);
  ASSERT_TRUE(fit.ok()) << fit.status();
  EXPECT_NEAR(fit->slope, 16.5, 1e-9);
  EXPECT_NEAR(fit->intercept, 120, 1e-6);
  EXPECT_NEAR(fit->r_squared, 1.0, 1e-12);
  EXPECT_EQ(fit->points, 4);
}

TEST(FitLineTest, NoisyLineMatchesHandComputedValues) {
  // x̄ = 2, ȳ = 4; Sxy = 8, Sxx = 4 -> slope 2, intercept 0; residuals 1, 0, -1, -1, 1
  // -> SSres = 4; SStot = 20 -> R² = 0.8.
  absl::StatusOr<LineFit> fit = FitLine({1, 2, 3, 1, 3}, {3, 4, 5, 1, 7});
  ASSERT_TRUE(fit.ok()) << fit.status();
  EXPECT_NEAR(fit->slope, 2.0, 1e-12);
  EXPECT_NEAR(fit->intercept, 0.0, 1e-12);
  EXPECT_NEAR(fit->r_squared, 0.8, 1e-12);
}

TEST(FitLineTest, RefusesDegenerateInput) {
  EXPECT_FALSE(FitLine({1}, {2}).ok());
  EXPECT_FALSE(FitLine({1, 2}, {2}).ok());
  EXPECT_FALSE(FitLine({5, 5, 5}, {1, 2, 3}).ok());
}

}  // namespace
}  // namespace fleetmark::engine
