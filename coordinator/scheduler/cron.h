// Five-field cron expressions, evaluated in UTC: "minute hour day-of-month month
// day-of-week", each field "*", a number, a range "a-b", a step "*/n" or "a-b/n", or a
// comma list of those. Months and weekdays also take names (jan..dec, sun..sat);
// day-of-week 0 and 7 are Sunday. As in Vixie cron, when both day-of-month and
// day-of-week are restricted a day matches if either does. Shorthands: @hourly,
// @daily (= @midnight), @weekly, @monthly, @yearly (= @annually).
//
//   FLEETMARK_ASSIGN_OR_RETURN(CronSchedule cron, CronSchedule::Parse("0 2 * * *"));
//   absl::Time next = *cron.NextAfter(clock.Now());   // the next 02:00 UTC
//
// Thread-safety: immutable after Parse; safe from any thread.
#pragma once

#include <bitset>
#include <optional>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace fleetmark::scheduler {

class CronSchedule {
 public:
  // InvalidArgument naming the field, the value and the allowed range, e.g.
  // "cron \"61 * * * *\": minute: 0 <= value <= 59, got 61".
  static absl::StatusOr<CronSchedule> Parse(absl::string_view expression);

  // The first matching minute strictly after `t` (seconds dropped), or nullopt if none
  // within 5 years (e.g. "0 0 30 2 *").
  std::optional<absl::Time> NextAfter(absl::Time t) const;

  // The latest matching minute at or before `t`, not earlier than `t - horizon`;
  // nullopt if none in that window.
  std::optional<absl::Time> LatestAtOrBefore(absl::Time t, absl::Duration horizon) const;

  // True if the minute containing `t` matches.
  bool Matches(absl::Time t) const;

  const std::string& expression() const { return expression_; }

 private:
  bool DayMatches(const absl::CivilDay& day) const;

  std::string expression_;
  std::bitset<60> minutes_;
  std::bitset<24> hours_;
  std::bitset<32> days_of_month_;  // 1..31
  std::bitset<13> months_;         // 1..12
  std::bitset<7> days_of_week_;    // 0 = Sunday
  bool dom_restricted_ = false;
  bool dow_restricted_ = false;
};

}  // namespace fleetmark::scheduler
