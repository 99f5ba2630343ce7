#include "coordinator/scheduler/cron.h"

#include <gtest/gtest.h>

#include "engine/common/clock.h"

namespace fleetmark::scheduler {
namespace {

absl::Time Utc(int y, int mo, int d, int h, int mi) {
  return absl::FromCivil(absl::CivilMinute(y, mo, d, h, mi), absl::UTCTimeZone());
}

TEST(CronTest, NightlyNextFire) {
  auto cron = CronSchedule::Parse("0 2 * * *");
  ASSERT_TRUE(cron.ok()) << cron.status();
  EXPECT_EQ(*cron->NextAfter(Utc(2026, 11, 30, 1, 59)), Utc(2026, 11, 30, 2, 0));
  // Strictly after: at 02:00 exactly the next one is tomorrow.
  EXPECT_EQ(*cron->NextAfter(Utc(2026, 11, 30, 2, 0)), Utc(2026, 12, 1, 2, 0));
  // Seconds are dropped, month and year roll over.
  EXPECT_EQ(*cron->NextAfter(Utc(2026, 12, 31, 3, 0) + absl::Seconds(30)), Utc(2027, 1, 1, 2, 0));
}

TEST(CronTest, StepsRangesListsAndNames) {
  auto every15 = CronSchedule::Parse("*/15 * * * *");
  ASSERT_TRUE(every15.ok());
  EXPECT_EQ(*every15->NextAfter(Utc(2026, 1, 1, 10, 7)), Utc(2026, 1, 1, 10, 15));
  EXPECT_EQ(*every15->NextAfter(Utc(2026, 1, 1, 10, 45)), Utc(2026, 1, 1, 11, 0));

  auto weekdays = CronSchedule::Parse("30 9 * * mon-fri");
  ASSERT_TRUE(weekdays.ok());
  // 2026-11-28 is a Saturday: next is Monday 30 Nov.
  EXPECT_EQ(*weekdays->NextAfter(Utc(2026, 11, 28, 12, 0)), Utc(2026, 11, 30, 9, 30));

  auto list = CronSchedule::Parse("0 8,20 1 jan,jul *");
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(*list->NextAfter(Utc(2026, 1, 1, 9, 0)), Utc(2026, 1, 1, 20, 0));
  EXPECT_EQ(*list->NextAfter(Utc(2026, 1, 1, 20, 0)), Utc(2026, 7, 1, 8, 0));

  auto sunday7 = CronSchedule::Parse("0 0 * * 7");
  ASSERT_TRUE(sunday7.ok());
  EXPECT_EQ(*sunday7->NextAfter(Utc(2026, 11, 30, 0, 0)), Utc(2026, 12, 6, 0, 0));  // a Sunday
}

TEST(CronTest, DayOfMonthOrDayOfWeekWhenBothRestricted) {
  auto cron = CronSchedule::Parse("0 0 13 * fri");
  ASSERT_TRUE(cron.ok());
  // From Sunday 2026-11-29: Friday 4 Dec comes before the 13th.
  EXPECT_EQ(*cron->NextAfter(Utc(2026, 11, 29, 0, 0)), Utc(2026, 12, 4, 0, 0));
  EXPECT_TRUE(cron->Matches(Utc(2026, 12, 13, 0, 0)));  // a Sunday, but the 13th
}

TEST(CronTest, LeapDayAndImpossibleDates) {
  auto leap = CronSchedule::Parse("0 0 29 2 *");
  ASSERT_TRUE(leap.ok());
  EXPECT_EQ(*leap->NextAfter(Utc(2026, 3, 1, 0, 0)), Utc(2028, 2, 29, 0, 0));
  auto never = CronSchedule::Parse("0 0 30 2 *");
  ASSERT_TRUE(never.ok());
  EXPECT_FALSE(never->NextAfter(Utc(2026, 1, 1, 0, 0)).has_value());
}

TEST(CronTest, LatestAtOrBeforeWithinHorizon) {
  auto cron = CronSchedule::Parse("0 2 * * *");
  ASSERT_TRUE(cron.ok());
  EXPECT_EQ(*cron->LatestAtOrBefore(Utc(2026, 11, 30, 2, 5), absl::Minutes(10)), Utc(2026, 11, 30, 2, 0));
  EXPECT_EQ(*cron->LatestAtOrBefore(Utc(2026, 11, 30, 2, 0), absl::ZeroDuration()), Utc(2026, 11, 30, 2, 0));
  EXPECT_FALSE(cron->LatestAtOrBefore(Utc(2026, 11, 30, 2, 30), absl::Minutes(10)).has_value());
}

TEST(CronTest, FakeClockDrivesNextFire) {
  FakeClock clock(Utc(2026, 11, 30, 1, 0));
  auto cron = CronSchedule::Parse("@hourly");
  ASSERT_TRUE(cron.ok());
  EXPECT_EQ(*cron->NextAfter(clock.Now()), Utc(2026, 11, 30, 2, 0));
  clock.Advance(absl::Hours(5) + absl::Minutes(1));
  EXPECT_EQ(*cron->NextAfter(clock.Now()), Utc(2026, 11, 30, 7, 0));
}

TEST(CronTest, ErrorsNameFieldValueAndRange) {
  auto bad = CronSchedule::Parse("61 * * * *");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find("minute: 0 <= value <= 59, got 61"), std::string::npos)
      << bad.status();
  for (const char* expr : {"", "* * * *", "* * * * * *", "0 24 * * *", "0 0 0 * *", "0 0 * 13 *", "0 0 * * 8",
                           "*/0 * * * *", "5-1 * * * *", "a * * * *", "0 0 * foo *", "1,,2 * * * *"}) {
    auto s = CronSchedule::Parse(expr);
    EXPECT_FALSE(s.ok()) << "\"" << expr << "\"";
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << expr;
  }
}

}  // namespace
}  // namespace fleetmark::scheduler
