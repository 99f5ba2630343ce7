#include "coordinator/scheduler/cron.h"

#include <array>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "engine/common/text.h"

namespace fleetmark::scheduler {
namespace {

struct FieldSpec {
  const char* name;
  int min;
  int max;
  const char* const* names;  // index 0 = value `min`, or null
  int name_count;
};

constexpr const char* kMonthNames[] = {"jan", "feb", "mar", "apr", "may", "jun",
                                       "jul", "aug", "sep", "oct", "nov", "dec"};
constexpr const char* kDayNames[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat"};

constexpr std::array<FieldSpec, 5> kFields = {{
    {"minute", 0, 59, nullptr, 0},
    {"hour", 0, 23, nullptr, 0},
    {"day-of-month", 1, 31, nullptr, 0},
    {"month", 1, 12, kMonthNames, 12},
    {"day-of-week", 0, 7, kDayNames, 7},
}};

absl::Status FieldError(absl::string_view expression, const FieldSpec& f, absl::string_view what) {
  // The expression and the field's text are the user's: escaped for a terminal.
  return absl::InvalidArgumentError(EscapeForTerminal(
      absl::StrCat("cron \"", std::string(expression), "\": ", f.name, ": ", std::string(what)), 300));
}

absl::StatusOr<int> ParseValue(absl::string_view expression, const FieldSpec& f, absl::string_view text) {
  const std::string lower = absl::AsciiStrToLower(std::string(text));
  for (int i = 0; i < f.name_count; ++i) {
    if (lower == f.names[i]) return f.min + i;
  }
  int value = 0;
  if (!absl::SimpleAtoi(lower, &value)) {
    return FieldError(expression, f,
                      absl::StrCat("expected a number", f.names ? " or a name" : "", ", got \"", lower, "\""));
  }
  if (value < f.min || value > f.max) {
    return FieldError(expression, f, absl::StrCat(f.min, " <= value <= ", f.max, ", got ", value));
  }
  return value;
}

// Sets bits [min..max] of `bits` (as a vector of bools indexed by value).
absl::Status ParseField(absl::string_view expression, const FieldSpec& f, absl::string_view text,
                        std::vector<bool>* bits, bool* restricted) {
  bits->assign(f.max + 1, false);
  *restricted = text != "*";
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    if (part.empty()) return FieldError(expression, f, "empty list element");
    int step = 1;
    absl::string_view range = part;
    if (size_t slash = part.find('/'); slash != absl::string_view::npos) {
      range = part.substr(0, slash);
      absl::string_view step_text = part.substr(slash + 1);
      if (!absl::SimpleAtoi(step_text, &step) || step < 1 || step > f.max) {
        return FieldError(expression, f,
                          absl::StrCat("step: 1 <= step <= ", f.max, ", got \"", std::string(step_text), "\""));
      }
    }
    int lo = f.min, hi = f.max;
    if (range != "*") {
      if (size_t dash = range.find('-'); dash != absl::string_view::npos) {
        absl::StatusOr<int> a = ParseValue(expression, f, range.substr(0, dash));
        if (!a.ok()) return a.status();
        absl::StatusOr<int> b = ParseValue(expression, f, range.substr(dash + 1));
        if (!b.ok()) return b.status();
        lo = *a;
        hi = *b;
        if (lo > hi) {
          return FieldError(expression, f, absl::StrCat("range start ", lo, " is after its end ", hi));
        }
      } else {
        absl::StatusOr<int> a = ParseValue(expression, f, range);
        if (!a.ok()) return a.status();
        lo = *a;
        hi = part.find('/') != absl::string_view::npos ? f.max : *a;
      }
    }
    for (int v = lo; v <= hi; v += step) (*bits)[v] = true;
  }
  return absl::OkStatus();
}

absl::CivilMinute ToMinute(absl::Time t) { return absl::ToCivilMinute(t, absl::UTCTimeZone()); }

absl::Time FromMinute(absl::CivilMinute m) { return absl::FromCivil(m, absl::UTCTimeZone()); }

}  // namespace

absl::StatusOr<CronSchedule> CronSchedule::Parse(absl::string_view expression) {
  std::string text = std::string(absl::StripAsciiWhitespace(expression));
  const std::string lower = absl::AsciiStrToLower(text);
  if (lower == "@hourly") text = "0 * * * *";
  if (lower == "@daily" || lower == "@midnight") text = "0 0 * * *";
  if (lower == "@weekly") text = "0 0 * * 0";
  if (lower == "@monthly") text = "0 0 1 * *";
  if (lower == "@yearly" || lower == "@annually") text = "0 0 1 1 *";
  std::vector<absl::string_view> fields = absl::StrSplit(text, absl::ByAnyChar(" \t"), absl::SkipEmpty());
  if (fields.size() != 5) {
    return absl::InvalidArgumentError(
        absl::StrCat("cron \"", EscapeForTerminal(std::string(expression), 80),
                     "\": expected 5 fields (minute hour day-of-month month day-of-week), got ", fields.size()));
  }
  CronSchedule cron;
  cron.expression_ = std::string(expression);
  std::vector<bool> bits;
  bool restricted = false;
  for (size_t i = 0; i < 5; ++i) {
    absl::Status status = ParseField(expression, kFields[i], fields[i], &bits, &restricted);
    if (!status.ok()) return status;
    for (int v = kFields[i].min; v <= kFields[i].max; ++v) {
      if (!bits[v]) continue;
      switch (i) {
        case 0:
          cron.minutes_.set(v);
          break;
        case 1:
          cron.hours_.set(v);
          break;
        case 2:
          cron.days_of_month_.set(v);
          break;
        case 3:
          cron.months_.set(v);
          break;
        case 4:
          cron.days_of_week_.set(v % 7);
          break;
      }
    }
    if (i == 2) cron.dom_restricted_ = restricted;
    if (i == 4) cron.dow_restricted_ = restricted;
  }
  return cron;
}

bool CronSchedule::DayMatches(const absl::CivilDay& day) const {
  if (!months_.test(day.month())) return false;
  const bool dom = days_of_month_.test(day.day());
  const int weekday = static_cast<int>(absl::GetWeekday(day));  // absl: Monday = 0
  const bool dow = days_of_week_.test((weekday + 1) % 7);
  if (dom_restricted_ && dow_restricted_) return dom || dow;
  return dom && dow;
}

bool CronSchedule::Matches(absl::Time t) const {
  const absl::CivilMinute m = ToMinute(t);
  return DayMatches(absl::CivilDay(m)) && hours_.test(m.hour()) && minutes_.test(m.minute());
}

std::optional<absl::Time> CronSchedule::NextAfter(absl::Time t) const {
  absl::CivilMinute start = ToMinute(t) + 1;
  absl::CivilDay day(start);
  const absl::CivilDay last = day + 5 * 366;
  for (; day <= last; ++day) {
    if (!DayMatches(day)) continue;
    const bool first_day = day == absl::CivilDay(start);
    for (int h = first_day ? start.hour() : 0; h < 24; ++h) {
      if (!hours_.test(h)) continue;
      const int first_minute = (first_day && h == start.hour()) ? start.minute() : 0;
      for (int m = first_minute; m < 60; ++m) {
        if (minutes_.test(m)) {
          return FromMinute(absl::CivilMinute(day.year(), day.month(), day.day(), h, m));
        }
      }
    }
  }
  return std::nullopt;
}

std::optional<absl::Time> CronSchedule::LatestAtOrBefore(absl::Time t, absl::Duration horizon) const {
  const absl::CivilMinute end = ToMinute(t);
  const absl::CivilMinute begin = ToMinute(t - horizon);
  absl::CivilDay day(end);
  for (; day >= absl::CivilDay(begin); --day) {
    if (!DayMatches(day)) continue;
    const bool last_day = day == absl::CivilDay(end);
    for (int h = last_day ? end.hour() : 23; h >= 0; --h) {
      if (!hours_.test(h)) continue;
      const int last_minute = (last_day && h == end.hour()) ? end.minute() : 59;
      for (int m = last_minute; m >= 0; --m) {
        if (!minutes_.test(m)) continue;
        absl::CivilMinute candidate(day.year(), day.month(), day.day(), h, m);
        if (candidate < begin) return std::nullopt;
        return FromMinute(candidate);
      }
    }
  }
  return std::nullopt;
}

}  // namespace fleetmark::scheduler
