// The synthetic workload: seeded wait distributions with their documented means, the
// calibration, and the factory. No timing assertions (the machine is noisy).
#include "engine/workloads/synthetic.h"

#include <cmath>

#include "gtest/gtest.h"

namespace fleetmark::engine {
namespace {

v1::SyntheticParams Params(uint32_t wait_us, const std::string& distribution, uint64_t seed = 0) {
  v1::SyntheticParams p;
  p.set_wait_us(wait_us);
  p.set_wait_distribution(distribution);
  p.set_wait_seed(seed);
  return p;
}

double MeanWaitUs(const v1::SyntheticParams& p, int n) {
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += absl::ToDoubleMicroseconds(SyntheticWait(p, i));
  return sum / n;
}

TEST(SyntheticWaitTest, FixedIsExactAndZeroWaitsNothing) {
  for (const char* d : {"", "fixed"}) {
    EXPECT_EQ(SyntheticWait(Params(316, d), 0), absl::Microseconds(316));
    EXPECT_EQ(SyntheticWait(Params(316, d), 99), absl::Microseconds(316));
  }
  EXPECT_EQ(SyntheticWait(Params(0, "exponential"), 3), absl::ZeroDuration());
}

TEST(SyntheticWaitTest, EachDistributionHasTheMeanAndIsSeeded) {
  constexpr int kTasks = 200'000;
  for (const char* d : {"uniform", "exponential", "lognormal"}) {
    const v1::SyntheticParams p = Params(1000, d, 42);
    // Standard error of the mean is at most ~1.3 us for these shapes at this n.
    EXPECT_NEAR(MeanWaitUs(p, kTasks), 1000, 20) << d;
    // A pure function of (seed, i): the same draw every time, another seed differs.
    EXPECT_EQ(SyntheticWait(p, 17), SyntheticWait(p, 17)) << d;
    int same = 0;
    for (int i = 0; i < 100; ++i) same += SyntheticWait(p, i) == SyntheticWait(Params(1000, d, 43), i);
    EXPECT_LT(same, 5) << d;
    // Draws vary from task to task, and never go negative.
    int distinct = 0;
    for (int i = 1; i < 100; ++i) {
      distinct += SyntheticWait(p, i) != SyntheticWait(p, i - 1);
      EXPECT_GE(SyntheticWait(p, i), absl::ZeroDuration());
    }
    EXPECT_GT(distinct, 90) << d;
  }
  // Uniform stays within [0, 2 * mean].
  for (int i = 0; i < 10'000; ++i) EXPECT_LE(SyntheticWait(Params(1000, "uniform", 1), i), absl::Microseconds(2000));
}

TEST(SyntheticWorkloadTest, CalibratesOnceAndComputesDeterministically) {
  const double ns = SyntheticNsPerIteration();
  EXPECT_GT(ns, 0);
  EXPECT_TRUE(std::isfinite(ns));
  EXPECT_EQ(SyntheticNsPerIteration(), ns);  // cached per process
  v1::SyntheticParams p;
  p.set_cpu_ns(10'000);
  p.set_alloc_bytes(4096);
  p.set_touch_kib(64);
  p.set_wait_us(5);
  absl::StatusOr<std::unique_ptr<Workload>> w = MakeWorkload("synthetic", p);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ((*w)->name(), "synthetic");
  EXPECT_EQ((*w)->calibration_ns_per_iteration(), ns);
  EXPECT_EQ((*w)->Compute(3), (*w)->Compute(3));
  EXPECT_NE(SyntheticSpin(1000, 1), SyntheticSpin(1001, 1));
  EXPECT_EQ((*w)->Wait(3), absl::Microseconds(5));
  // Without computation there is nothing to calibrate.
  absl::StatusOr<std::unique_ptr<Workload>> waits = MakeWorkload("synthetic", Params(5, ""));
  ASSERT_TRUE(waits.ok());
  EXPECT_EQ((*waits)->calibration_ns_per_iteration(), 0);
  // The S1 workloads ignore the parameters and have no calibration.
  EXPECT_EQ((*MakeWorkload("storage", p))->Wait(0), absl::Microseconds(500));
  EXPECT_EQ((*MakeWorkload("storage", p))->calibration_ns_per_iteration(), 0);
}

}  // namespace
}  // namespace fleetmark::engine
