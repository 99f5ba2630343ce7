// The retention rule of `results prune --older_than` (coordinator/service/retention.h).
#include "coordinator/service/retention.h"

#include <gtest/gtest.h>

namespace fleetmark::service {
namespace {

TEST(RetentionTest, ParsesDaysWeeksAndAbseilDurations) {
  EXPECT_EQ(*ParseRetention("--older_than", "400d"), absl::Hours(24 * 400));
  EXPECT_EQ(*ParseRetention("--older_than", "8w"), absl::Hours(24 * 56));
  EXPECT_EQ(*ParseRetention("--older_than", "720h"), absl::Hours(720));
  EXPECT_EQ(*ParseRetention("--older_than", "1h30m"), absl::Minutes(90));
  EXPECT_EQ(*ParseRetention("--older_than", "36500d"), kMaxRetention);
  EXPECT_EQ(*ParseRetention("--older_than", "1h"), kMinRetention);
}

TEST(RetentionTest, RejectsMalformedAndOutOfRangeNamingTheField) {
  for (const char* text : {"", "d", "3x", "-4d", "1.5d", "abc", "10", "99999999999999999999d"}) {
    absl::StatusOr<absl::Duration> parsed = ParseRetention("--older_than", text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_TRUE(absl::IsInvalidArgument(parsed.status())) << text;
    EXPECT_EQ(parsed.status().message(),
              std::string("--older_than: a duration such as 400d, 8w or 720h (1h to 36500d), got \"") + text + "\"");
  }
  for (const char* text : {"0d", "30m", "36501d", "0s", "-2h"}) {
    absl::StatusOr<absl::Duration> parsed = ParseRetention("--older_than", text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_TRUE(absl::IsInvalidArgument(parsed.status())) << text;
  }
  EXPECT_EQ(ParseRetention("--older_than", "30m").status().message(), "--older_than: 1h to 36500d, got 30m");
  EXPECT_EQ(CheckRetention("older_than_seconds", absl::Seconds(59)).message(),
            "older_than_seconds: 1h to 36500d, got 59s");
  EXPECT_TRUE(CheckRetention("older_than_seconds", absl::Hours(2)).ok());
}

}  // namespace
}  // namespace fleetmark::service
