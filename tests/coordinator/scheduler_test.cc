// The schedule runner over the in-memory store (coordinator/store/memory_store.h) on one
// fake clock, the runners' and the store's: a slot fires once even with two runners
// ("coordinators") on one database, missed slots beyond the catch-up window are
// skipped, and the next fire time is recorded.
#include "coordinator/scheduler/scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "absl/strings/str_cat.h"

#include "coordinator/store/memory_store.h"
#include "engine/common/clock.h"
#include "tests/coordinator/schedule_fixtures.h"

namespace fleetmark::scheduler {
namespace {

absl::Time Utc(int y, int mo, int d, int h, int mi, int s = 0) {
  return absl::FromCivil(absl::CivilSecond(y, mo, d, h, mi, s), absl::UTCTimeZone());
}

// A nightly 02:00 UTC slot.
const absl::Time kSlot = Utc(2026, 11, 30, 2, 0);

// A coordinator `id` on the in-memory database `db`.
std::unique_ptr<store::Store> OpenStore(const std::shared_ptr<store::MemoryDatabase>& db, const std::string& id) {
  store::StoreOptions options;
  options.coordinator_id = id;
  return std::make_unique<store::MemoryStore>(options, db);
}

TEST(ScheduleRunnerTest, SlotFiresOnceAcrossRunnersAndSkipsStaleSlots) {
  const absl::Time slot = kSlot;
  FakeClock clock(slot - absl::Minutes(1));
  auto db = std::make_shared<store::MemoryDatabase>(clock);
  auto store1 = OpenStore(db, "c1");
  auto store2 = OpenStore(db, "c2");
  ASSERT_NE(store1, nullptr);
  ASSERT_NE(store2, nullptr);
  store::AgentRegistration reg;
  reg.name = "board";
  reg.session_id = "s";
  auto agent = store1->RegisterAgent(reg);
  ASSERT_TRUE(agent.ok()) << agent.status();

  v1::Schedule schedule;
  schedule.set_name("nightly");
  schedule.set_cron("0 2 * * *");
  schedule.mutable_plan()->set_name("nightly");
  ASSERT_TRUE(store1->CreateSchedule(schedule, clock.Now()).ok());

  int built = 0;
  RunBuilder build = [&, on_agent = BuildOnAgent(*agent)](const v1::Schedule& s) {
    ++built;
    return on_agent(s);
  };
  ScheduleRunner runner1(*store1, clock, build, {.catch_up = absl::Minutes(10)});
  ScheduleRunner runner2(*store2, clock, build, {.catch_up = absl::Minutes(10)});

  auto fired = runner1.Tick();  // 01:59: nothing due
  ASSERT_TRUE(fired.ok()) << fired.status();
  EXPECT_TRUE(fired->empty());
  auto listed = store1->ListSchedules();
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ((*listed)[0].next_fire_unix_ns(), absl::ToUnixNanos(slot));

  clock.Set(slot + absl::Seconds(30));
  auto a = runner1.Tick();
  auto b = runner2.Tick();
  auto c = runner1.Tick();
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(a->size() + b->size() + c->size(), 1u);  // exactly one run for the slot
  EXPECT_EQ(built, 1);                               // built by the runner that fired it
  const v1::RunInfo& run = a->empty() ? (*b)[0] : (*a)[0];
  auto with_fire = store1->ListSchedules();
  ASSERT_TRUE(with_fire.ok());
  EXPECT_EQ((*with_fire)[0].last_fire_slot_unix_ns(), absl::ToUnixNanos(slot));
  EXPECT_EQ((*with_fire)[0].last_fire_outcome(), "run " + run.run_id());
  EXPECT_EQ(run.submitted_by(), "schedule:nightly");
  EXPECT_EQ(run.jobs_size(), 1);

  // Down for two days: the slot two days ago is beyond catch-up, the latest is not due
  // yet at 01:00; at 02:05 only today's fires.
  clock.Set(slot + absl::Hours(47));
  auto late = runner2.Tick();
  ASSERT_TRUE(late.ok());
  EXPECT_TRUE(late->empty());
  clock.Set(slot + absl::Hours(48) + absl::Minutes(5));
  auto today = runner2.Tick();
  ASSERT_TRUE(today.ok());
  EXPECT_EQ(today->size(), 1u);
  auto last = store1->LastFiredSlot("nightly");
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(**last, slot + absl::Hours(48));
  auto runs = store1->ListRuns(10);
  ASSERT_TRUE(runs.ok());
  EXPECT_EQ(runs->size(), 2u);
}

// Created at 14:16:12 with "16 * * * *": the 14:16 slot is before the creation and
// never fires; the first run is the 15:16 slot, as announced. (The store stamps the
// creation time, so the cron minute is the minute of that stamp.)
TEST(ScheduleRunnerTest, SlotOfTheCreationMinuteDoesNotFire) {
  FakeClock clock(Utc(2026, 11, 30, 14, 16, 12));
  auto db = std::make_shared<store::MemoryDatabase>(clock);
  auto store = OpenStore(db, "c1");
  ASSERT_NE(store, nullptr);
  store::AgentRegistration reg;
  reg.name = "board";
  reg.session_id = "s";
  auto agent = store->RegisterAgent(reg);
  ASSERT_TRUE(agent.ok()) << agent.status();

  v1::Schedule schedule;
  schedule.set_name("hourly");
  schedule.set_cron("16 * * * *");
  schedule.mutable_plan()->set_name("hourly");
  auto stored = store->CreateSchedule(schedule, clock.Now() + absl::Hours(1));
  ASSERT_TRUE(stored.ok()) << stored.status();
  const absl::Time created = absl::FromUnixNanos(stored->created_unix_ns());
  EXPECT_EQ(created, Utc(2026, 11, 30, 14, 16, 12)) << "the store stamps its clock's time";
  const absl::Time minute_start = Utc(2026, 11, 30, 14, 16);

  RunBuilder build = BuildOnAgent(*agent);
  // Still within the creation minute, after the creation.
  clock.Set(minute_start + absl::Milliseconds(59999));
  ScheduleRunner runner(*store, clock, build, {.catch_up = absl::Minutes(10)});
  auto fired = runner.Tick();
  ASSERT_TRUE(fired.ok()) << fired.status();
  EXPECT_TRUE(fired->empty()) << "the slot of the creation minute fired although it precedes the creation";
  auto listed = store->ListSchedules();
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].next_fire_unix_ns(), absl::ToUnixNanos(minute_start + absl::Hours(1)));

  clock.Set(minute_start + absl::Hours(1) + absl::Seconds(30));
  fired = runner.Tick();
  ASSERT_TRUE(fired.ok()) << fired.status();
  EXPECT_EQ(fired->size(), 1u);
  auto last = store->LastFiredSlot("hourly");
  ASSERT_TRUE(last.ok());
  ASSERT_TRUE(last->has_value());
  EXPECT_EQ(**last, minute_start + absl::Hours(1));
}

// A slot whose run matches no online agent is built (and logged) once, not at every
// tick of its minute, by whichever runner records the fire; `schedules list` shows the
// outcome. The nightly 02:00 with no agent online behaves the same.
TEST(ScheduleRunnerTest, SlotMatchingNobodyIsBuiltAndLoggedOnce) {
  const absl::Time slot = kSlot;
  FakeClock clock(slot - absl::Hours(1));
  auto db = std::make_shared<store::MemoryDatabase>(clock);
  auto store1 = OpenStore(db, "c1");
  auto store2 = OpenStore(db, "c2");
  ASSERT_NE(store1, nullptr);
  ASSERT_NE(store2, nullptr);
  v1::Schedule schedule;
  schedule.set_name("nightly");
  schedule.set_cron("0 2 * * *");
  schedule.set_selector("name=nobody");
  schedule.mutable_plan()->set_name("nightly");
  ASSERT_TRUE(store1->CreateSchedule(schedule, slot).ok());
  clock.Set(slot + absl::Seconds(1));
  int built = 0;
  RunBuilder build = [&](const v1::Schedule& s) -> absl::StatusOr<store::NewRun> {
    ++built;
    return absl::FailedPreconditionError(
        absl::StrCat("no online agent matches selector \"", s.selector(), "\" (0 agents known, 0 online)"));
  };
  ScheduleRunner runner1(*store1, clock, build, {.catch_up = absl::Minutes(10)});
  ScheduleRunner runner2(*store2, clock, build, {.catch_up = absl::Minutes(10)});
  ::testing::internal::CaptureStderr();
  for (int second = 1; second < 60; second += 5) {  // the sweeper's ticks in that minute
    clock.Set(slot + absl::Seconds(second));
    auto a = runner1.Tick();
    auto b = runner2.Tick();
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_TRUE(a->empty() && b->empty());
  }
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(built, 1);
  size_t lines = 0;
  for (size_t at = log.find("no online agent matches"); at != std::string::npos;
       at = log.find("no online agent matches", at + 1)) {
    ++lines;
  }
  EXPECT_EQ(lines, 1u) << log;
  EXPECT_NE(log.find("schedule \"nightly\" slot "), std::string::npos) << log;

  auto listed = store1->ListSchedules();
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].last_fire_slot_unix_ns(), absl::ToUnixNanos(slot));
  EXPECT_EQ((*listed)[0].last_fire_outcome(),
            "skipped: no online agent matches selector \"name=nobody\" (0 agents known, 0 online)");
  auto runs = store1->ListRuns(10);
  ASSERT_TRUE(runs.ok());
  EXPECT_TRUE(runs->empty());

  // The next night is a new slot: built (and recorded) again, once.
  clock.Set(slot + absl::Hours(24) + absl::Seconds(3));
  ASSERT_TRUE(runner2.Tick().ok());
  ASSERT_TRUE(runner1.Tick().ok());
  EXPECT_EQ(built, 2);
  listed = store2->ListSchedules();
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ((*listed)[0].last_fire_slot_unix_ns(), absl::ToUnixNanos(slot + absl::Hours(24)));
}

// A schedule keeps its filter and quick (the runs it fires get them from the builder,
// which reads them off the listed schedule); a paused schedule's slots are recorded as
// "skipped: paused" and build nothing, also not late after resume; RunNow fires a
// paused schedule at once through the builder, and the next slot after resume fires.
TEST(ScheduleRunnerTest, PausedSchedulesDoNotFireAndRunNowFiresOnce) {
  const absl::Time slot = kSlot;
  FakeClock clock(slot - absl::Hours(1));
  auto db = std::make_shared<store::MemoryDatabase>(clock);
  auto store = OpenStore(db, "c1");
  ASSERT_NE(store, nullptr);
  store::AgentRegistration reg;
  reg.name = "board";
  reg.session_id = "s";
  auto agent = store->RegisterAgent(reg);
  ASSERT_TRUE(agent.ok()) << agent.status();
  v1::Schedule schedule;
  schedule.set_name("nightly");
  schedule.set_cron("0 2 * * *");
  schedule.set_quick(true);
  schedule.set_filter("network/.*");
  schedule.mutable_plan()->set_name("nightly");
  ASSERT_TRUE(store->CreateSchedule(schedule, slot).ok());

  std::vector<std::string> built_with;  // "quick filter" of each build
  RunBuilder build = [&, on_agent = BuildOnAgent(*agent)](const v1::Schedule& s) {
    built_with.push_back(absl::StrCat(s.quick(), " ", s.filter()));
    return on_agent(s);
  };
  ScheduleRunner runner(*store, clock, build, {.catch_up = absl::Minutes(10)});
  ASSERT_TRUE(store->SetSchedulePaused("nightly", true).ok());
  EXPECT_TRUE(absl::IsNotFound(store->SetSchedulePaused("nobody", true)));
  auto listed = store->ListSchedules();
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_TRUE((*listed)[0].paused());
  EXPECT_TRUE((*listed)[0].quick());
  EXPECT_EQ((*listed)[0].filter(), "network/.*");

  clock.Set(slot + absl::Seconds(30));
  auto fired = runner.Tick();
  ASSERT_TRUE(fired.ok()) << fired.status();
  EXPECT_TRUE(fired->empty());
  EXPECT_TRUE(built_with.empty());
  listed = store->ListSchedules();
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ((*listed)[0].last_fire_slot_unix_ns(), absl::ToUnixNanos(slot));
  EXPECT_EQ((*listed)[0].last_fire_outcome(), "skipped: paused");

  // Fire now, paused or not: one run, with the schedule's quick and filter.
  clock.Set(slot + absl::Minutes(1));
  auto now = runner.RunNow("nightly");
  ASSERT_TRUE(now.ok()) << now.status();
  EXPECT_FALSE(now->run_id().empty());
  EXPECT_EQ(now->submitted_by(), "schedule:nightly");
  EXPECT_EQ(built_with, std::vector<std::string>{"1 network/.*"});
  EXPECT_TRUE(absl::IsNotFound(runner.RunNow("nobody").status()));
  listed = store->ListSchedules();
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ((*listed)[0].last_fire_outcome(), "run " + now->run_id());

  // Resumed within the catch-up window of the paused slot: it does not fire late.
  ASSERT_TRUE(store->SetSchedulePaused("nightly", false).ok());
  clock.Set(slot + absl::Minutes(2));
  fired = runner.Tick();
  ASSERT_TRUE(fired.ok());
  EXPECT_TRUE(fired->empty());
  // The next night fires.
  clock.Set(slot + absl::Hours(24) + absl::Seconds(5));
  fired = runner.Tick();
  ASSERT_TRUE(fired.ok());
  ASSERT_EQ(fired->size(), 1u);
  EXPECT_EQ(built_with.size(), 2u);
  auto runs = store->ListRuns(10);
  ASSERT_TRUE(runs.ok());
  EXPECT_EQ(runs->size(), 2u);
}

}  // namespace
}  // namespace fleetmark::scheduler
