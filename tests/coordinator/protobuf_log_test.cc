// LogRateLimiter (coordinator/service/protobuf_log.h) with explicit times: a burst
// passes, then one line per interval carrying the count of lines dropped before it.
#include "coordinator/service/protobuf_log.h"

#include "gtest/gtest.h"

namespace fleetmark::service {
namespace {

TEST(LogRateLimiterTest, ABurstThenOneLinePerIntervalWithTheSuppressedCount) {
  LogRateLimiter limiter(3, absl::Minutes(1));
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(limiter.Admit(t0, "line"), "line") << i;
  }
  for (int i = 0; i < 1500; ++i) {
    EXPECT_FALSE(limiter.Admit(t0 + absl::Seconds(59), "line").has_value()) << i;
  }
  EXPECT_EQ(limiter.Admit(t0 + absl::Minutes(1), "next"), "(1500 more protobuf log lines suppressed) next");
  EXPECT_FALSE(limiter.Admit(t0 + absl::Minutes(1) + absl::Seconds(1), "x").has_value());
  EXPECT_EQ(limiter.Admit(t0 + absl::Minutes(2), "y"), "(1 more protobuf log line suppressed) y");
  EXPECT_EQ(limiter.Admit(t0 + absl::Minutes(4), "z"), "z");
}

}  // namespace
}  // namespace fleetmark::service
