#include "agent/backoff.h"

#include <random>

#include "gtest/gtest.h"

namespace fleetmark::agent {
namespace {

TEST(BackoffTest, DelaysStayWithinFloorAndGrowingCeilingUpToTheCap) {
  std::mt19937_64 gen(42);
  const BackoffOptions options{.initial_delay = absl::Milliseconds(100),
                               .max_delay = absl::Seconds(5),
                               .min_delay = absl::Milliseconds(10),
                               .multiplier = 2.0};
  ASSERT_TRUE(ValidateBackoffOptions(options).ok());
  Backoff backoff(options, gen);
  absl::Duration expected_ceiling = absl::Milliseconds(100);
  for (int attempt = 0; attempt < 40; ++attempt) {
    EXPECT_EQ(backoff.CurrentCeiling(), expected_ceiling) << "attempt " << attempt;
    const absl::Duration delay = backoff.NextDelay();
    EXPECT_GE(delay, options.min_delay) << "attempt " << attempt;
    EXPECT_LE(delay, expected_ceiling) << "attempt " << attempt;
    expected_ceiling = std::min(expected_ceiling * 2, options.max_delay);
  }
  EXPECT_EQ(backoff.CurrentCeiling(), options.max_delay);
}

TEST(BackoffTest, FullJitterSpreadsDelaysOverTheWholeRange) {
  std::mt19937_64 gen(7);
  const BackoffOptions options{.initial_delay = absl::Seconds(1),
                               .max_delay = absl::Seconds(1),
                               .min_delay = absl::Milliseconds(1),
                               .multiplier = 2.0};
  Backoff backoff(options, gen);
  absl::Duration low = absl::InfiniteDuration();
  absl::Duration high = absl::ZeroDuration();
  absl::Duration sum;
  constexpr int kDraws = 2000;
  for (int i = 0; i < kDraws; ++i) {
    const absl::Duration d = backoff.NextDelay();
    low = std::min(low, d);
    high = std::max(high, d);
    sum += d;
  }
  // Uniform on [1 ms, 1 s]: extremes near both ends, mean near 0.5 s.
  EXPECT_LT(low, absl::Milliseconds(50));
  EXPECT_GT(high, absl::Milliseconds(950));
  EXPECT_NEAR(absl::ToDoubleSeconds(sum / kDraws), 0.5, 0.05);
}

TEST(BackoffTest, ResetReturnsToTheInitialCeiling) {
  std::mt19937_64 gen(1);
  Backoff backoff(BackoffOptions{}, gen);
  for (int i = 0; i < 10; ++i) backoff.NextDelay();
  EXPECT_EQ(backoff.CurrentCeiling(), BackoffOptions{}.max_delay);
  backoff.Reset();
  EXPECT_EQ(backoff.attempt(), 0u);
  EXPECT_EQ(backoff.CurrentCeiling(), BackoffOptions{}.initial_delay);
  EXPECT_LE(backoff.NextDelay(), BackoffOptions{}.initial_delay);
}

TEST(BackoffTest, VeryLongOutagesDoNotOverflow) {
  std::mt19937_64 gen(3);
  Backoff backoff(BackoffOptions{}, gen);
  for (int i = 0; i < 5000; ++i) {
    const absl::Duration d = backoff.NextDelay();
    ASSERT_LE(d, absl::Seconds(30));
    ASSERT_GE(d, absl::Milliseconds(50));
  }
}

TEST(BackoffTest, ValidationNamesTheField) {
  BackoffOptions bad_floor;
  bad_floor.min_delay = absl::ZeroDuration();
  EXPECT_NE(ValidateBackoffOptions(bad_floor).message().find("backoff.min_delay"), std::string::npos);
  BackoffOptions bad_cap;
  bad_cap.max_delay = absl::Milliseconds(100);
  EXPECT_NE(ValidateBackoffOptions(bad_cap).message().find("backoff.initial_delay"), std::string::npos);
  // A cap that is not positive is the cap's fault, not the initial delay's.
  BackoffOptions negative_cap;
  negative_cap.max_delay = absl::Seconds(-1);
  EXPECT_EQ(ValidateBackoffOptions(negative_cap).message(), "backoff.max_delay: 0 < max_delay <= 1h, got -1s");
  BackoffOptions zero_initial;
  zero_initial.initial_delay = absl::ZeroDuration();
  EXPECT_EQ(ValidateBackoffOptions(zero_initial).message(),
            "backoff.initial_delay: 0 < initial_delay <= max_delay (30s), got 0");
  BackoffOptions bad_multiplier;
  bad_multiplier.multiplier = 0.5;
  EXPECT_NE(ValidateBackoffOptions(bad_multiplier).message().find("backoff.multiplier"), std::string::npos);
  EXPECT_TRUE(ValidateBackoffOptions(BackoffOptions{}).ok());
}

}  // namespace
}  // namespace fleetmark::agent
