// The plan `recommend --measure` runs (recommend_plan.h): it brackets the profile (the
// point and its neighbours x0.5 and x2 on each given parameter), measures both io modes
// when the profile waits, takes its contenders from the registry's traits, is a valid
// plan whose cases are those points, and refuses profiles it cannot measure naming the
// key and range.
#include "engine/report/recommend_plan.h"

#include <set>

#include "engine/plan/plan.h"
#include "engine/strategies/registry.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetmark::report {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

Profile Parse(const std::string& text) {
  absl::StatusOr<Profile> p = ParseProfile(text);
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? *p : Profile{};
}

BracketPlan Build(const std::string& profile, BracketOptions options = {}) {
  absl::StatusOr<BracketPlan> b = BuildBracketPlan(Parse(profile), options);
  EXPECT_TRUE(b.ok()) << b.status();
  return b.ok() ? *b : BracketPlan{};
}

// (cpu_ns, wait_us) of every case of io mode `io_mode` and strategy label `label`.
std::set<std::pair<uint32_t, uint32_t>> PointsOf(const BracketPlan& b, const std::string& io_mode,
                                                 const std::string& label) {
  std::set<std::pair<uint32_t, uint32_t>> out;
  for (const v1::CaseSpec& c : engine::ExpandCases(b.plan, /*quick=*/true)) {
    if (c.io_mode() == io_mode && c.strategy().label() == label) {
      out.insert({c.synthetic().cpu_ns(), c.synthetic().wait_us()});
    }
  }
  return out;
}

std::set<std::string> LabelsOf(const BracketPlan& b, const std::string& io_mode) {
  std::set<std::string> out;
  for (const v1::CaseSpec& c : engine::ExpandCases(b.plan, /*quick=*/true)) {
    if (c.io_mode() == io_mode) out.insert(c.strategy().label());
  }
  return out;
}

TEST(BracketPlanTest, TheDocumentedExampleIsBracketedInBothIoModes) {
  const BracketPlan b = Build("cpu_us=50,wait_us=2000");
  ASSERT_TRUE(engine::ValidatePlan(b.plan).ok()) << engine::ValidatePlan(b.plan);
  EXPECT_EQ(b.plan.name(), "recommend");
  EXPECT_THAT(b.io_modes, ElementsAre("blocking", "suspending"));
  // The profile and one neighbour below and above on each parameter: a cross of 5.
  ASSERT_EQ(b.points.size(), 5u);
  EXPECT_EQ(b.points[0].role, "profile");
  EXPECT_THAT(b.points[0].params, ElementsAre(std::pair<std::string, double>("cpu_ns", 50000),
                                              std::pair<std::string, double>("wait_us", 2000)));
  EXPECT_EQ(b.points[1].role, "cpu_ns x0.5");
  EXPECT_EQ(b.points[4].role, "wait_us x2");
  const std::set<std::pair<uint32_t, uint32_t>> cross = {
      {50000, 2000}, {25000, 2000}, {100000, 2000}, {50000, 1000}, {50000, 4000}};
  for (const std::string& io_mode : b.io_modes) {
    for (const std::string& label : LabelsOf(b, io_mode)) {
      EXPECT_EQ(PointsOf(b, io_mode, label), cross) << io_mode << " " << label;
    }
  }
  // Every case is a batch of the assumed size; each measured in >= 3 processes.
  for (const v1::CaseSpec& c : engine::ExpandCases(b.plan, /*quick=*/true)) EXPECT_EQ(c.batch().tasks(), 100u);
  EXPECT_EQ(engine::ApplyQuick(b.plan).measurement().processes(), 3u);
  EXPECT_EQ(b.plan.measurement().processes(), 3u);
  EXPECT_EQ(AssumedText(b),
            "100 tasks per batch; thread counts tried 16, 64, 100 and one per CPU; neighbours x0.5 and x2 of each "
            "given parameter");
}

TEST(BracketPlanTest, ContendersComeFromTheRegistrysTraits) {
  const BracketPlan b = Build("wait_us=2000", {.tasks = 1000});
  // Blocking: every kPool strategy that uses threads, CPU-sized and IO-sized; no caller
  // (the profile waits).
  std::set<std::string> blocking, suspending;
  for (const engine::StrategyTraits& s : engine::kStrategies) {
    if (s.carrier == engine::Carrier::kPool && !s.ignores_threads) {
      for (const char* suffix : {"", "_16", "_64", "_256"}) blocking.insert(std::string(s.name) + suffix);
    }
    if (s.suspending) suspending.insert(std::string(s.name));
  }
  ASSERT_FALSE(blocking.empty());
  ASSERT_FALSE(suspending.empty());
  EXPECT_EQ(LabelsOf(b, "blocking"), blocking);
  EXPECT_EQ(LabelsOf(b, "suspending"), suspending);
  EXPECT_THAT(b.io_threads, ElementsAre(16, 64, 256));
  // One parameter: the profile and its two neighbours.
  ASSERT_EQ(b.points.size(), 3u);
  EXPECT_EQ(PointsOf(b, "suspending", *suspending.begin()),
            (std::set<std::pair<uint32_t, uint32_t>>{{0, 1000}, {0, 2000}, {0, 4000}}));
}

TEST(BracketPlanTest, WithoutAWaitOneIoModeAndTheCallerToo) {
  const BracketPlan b = Build("cpu_us=2", {.tasks = 8});
  ASSERT_TRUE(engine::ValidatePlan(b.plan).ok()) << engine::ValidatePlan(b.plan);
  EXPECT_THAT(b.io_modes, ElementsAre("blocking"));
  EXPECT_TRUE(LabelsOf(b, "suspending").empty());
  bool caller = false;
  for (const std::string& label : LabelsOf(b, "blocking")) {
    const engine::StrategyTraits* t = engine::FindStrategy(label);
    caller = caller || (t != nullptr && t->carrier == engine::Carrier::kCaller);
  }
  EXPECT_TRUE(caller);
  // Thread counts above the batch's tasks become the task count (once).
  EXPECT_THAT(b.io_threads, ElementsAre(8));
}

TEST(BracketPlanTest, TwoParametersAtTheirEdgesAndAZero) {
  // wait_us=0 is given but has no neighbours on a log scale; cpu_ns=1 has 0 below.
  const BracketPlan b = Build("cpu_ns=1,wait_us=0");
  ASSERT_TRUE(engine::ValidatePlan(b.plan).ok()) << engine::ValidatePlan(b.plan);
  ASSERT_EQ(b.points.size(), 3u);
  EXPECT_EQ(b.points[1].params[0].second, 0);
  EXPECT_EQ(b.points[2].params[0].second, 2);
  // Four parameters: 1 + 2·4 points, no case id twice (ValidatePlan refuses duplicates).
  const BracketPlan four = Build("cpu_us=5,wait_us=100,alloc_bytes=64,touch_kib=4", {.tasks = 10});
  ASSERT_TRUE(engine::ValidatePlan(four.plan).ok()) << engine::ValidatePlan(four.plan);
  EXPECT_EQ(four.points.size(), 9u);
}

TEST(BracketPlanTest, ProfilesItCannotMeasureAreRefusedNamingTheKeyAndRange) {
  auto error = [](const std::string& profile, BracketOptions options = {}) {
    absl::StatusOr<BracketPlan> b = BuildBracketPlan(Parse(profile), options);
    EXPECT_FALSE(b.ok()) << profile;
    return b.ok() ? std::string() : std::string(b.status().message());
  };
  // Named as written (it said "cpu_ns: ... got 20000000" for cpu_ms=20).
  EXPECT_EQ(error("cpu_ms=20"), "--profile: cpu_ms: 0 <= cpu_ms <= 10 for --measure (cpu_ns <= 10000000), got 20");
  EXPECT_EQ(error("cpu_us=20000"),
            "--profile: cpu_us: 0 <= cpu_us <= 10000 for --measure (cpu_ns <= 10000000), got 20000");
  EXPECT_EQ(error("wait_us=200000"), "--profile: wait_us: 0 <= wait_us <= 100000 for --measure, got 200000");
  EXPECT_EQ(error("wait_ms=200"), "--profile: wait_ms: 0 <= wait_ms <= 100 for --measure (wait_us <= 100000), got 200");
  EXPECT_THAT(error("wait_us=10", {.tasks = 0}), HasSubstr("--tasks: 1 <= tasks <= 10000, got 0"));
  EXPECT_THAT(error("wait_us=10", {.tasks = 10001}), HasSubstr("--tasks: 1 <= tasks <= 10000, got 10001"));
  EXPECT_THAT(error("wait_ms=50", {.tasks = 1000}),
              HasSubstr("--tasks: 1000 tasks of wait_ms=50 take 100 s per batch one after another"));
  EXPECT_THAT(BuildBracketPlan(Profile{}, {}).status().message(), HasSubstr("--profile: give at least one"));
}

// ParseProfile with MeasureProfileLimits quotes the range BuildBracketPlan measures,
// in the same words, also for a value past the plan's own range (it quoted the plan's).
TEST(BracketPlanTest, ParsingForMeasureQuotesItsRange) {
  const ProfileLimits limits = MeasureProfileLimits();
  auto error = [&](const std::string& profile) {
    absl::StatusOr<Profile> p = ParseProfile(profile, &limits);
    EXPECT_FALSE(p.ok()) << profile;
    return p.ok() ? std::string() : std::string(p.status().message());
  };
  EXPECT_EQ(error("cpu_us=99999999"),
            "cpu_us: 0 <= cpu_us <= 10000 for --measure (cpu_ns <= 10000000), got \"99999999\"");
  EXPECT_EQ(error("cpu_us=20000"), "cpu_us: 0 <= cpu_us <= 10000 for --measure (cpu_ns <= 10000000), got \"20000\"");
  EXPECT_EQ(error("touch_mib=1000"),
            "touch_mib: 0 <= touch_mib <= 64 for --measure (touch_kib <= 65536), got \"1000\"");
  EXPECT_THAT(error("cpu_us=1e5"), HasSubstr("a plain decimal number (e.g. 50 or 0.5) in 0 <= cpu_us <= 10000 for"));
  // At the limit it parses; without limits, the plan's range applies.
  EXPECT_TRUE(ParseProfile("cpu_us=10000", &limits).ok());
  EXPECT_TRUE(ParseProfile("cpu_us=20000").ok());
  EXPECT_THAT(std::string(ParseProfile("cpu_us=99999999").status().message()),
              HasSubstr("0 <= cpu_us <= 1000000 (cpu_ns <= 1000000000)"));
}

}  // namespace
}  // namespace fleetmark::report
