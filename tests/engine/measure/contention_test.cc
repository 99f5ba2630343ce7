// ParseProcStat and OtherCpuShare on fixture /proc/stat text, and ContentionProbe with
// an injected reader (engine/measure/contention.h).
#include "engine/measure/contention.h"

#include <cmath>

#include <string>
#include <vector>

#include "engine/measure/scheduling_delay.h"
#include "gtest/gtest.h"

namespace fleetmark::engine {
namespace {

// A 2-CPU machine's /proc/stat: the aggregate line, then per CPU.
std::string Stat(uint64_t user, uint64_t system, uint64_t idle, uint64_t steal) {
  return "cpu  " + std::to_string(user) + " 0 " + std::to_string(system) + " " + std::to_string(idle) + " 0 0 0 " +
         std::to_string(steal) + " 0 0\ncpu0 1 0 1 1 0 0 0 0 0 0\ncpu1 1 0 1 1 0 0 0 0 0 0\nintr 5\n";
}

TEST(ProcStatTest, ParsesTheAggregateLine) {
  absl::StatusOr<ProcStatTimes> t = ParseProcStat("cpu  10 2 3 100 5 1 1 7 4 0\ncpu0 1 1 1 1\n");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->total, 10u + 2 + 3 + 100 + 5 + 1 + 1 + 7);  // guest (inside user) not again
  EXPECT_EQ(t->busy, 10u + 2 + 3 + 1 + 1);                 // not idle, iowait, steal
  EXPECT_EQ(t->steal, 7u);
  // An old kernel's four fields.
  t = ParseProcStat("cpu 1 2 3 4\n");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->total, 10u);
  EXPECT_EQ(t->busy, 6u);
  EXPECT_FALSE(ParseProcStat("cpu0 1 2 3 4\n").ok());
  EXPECT_FALSE(ParseProcStat("cpu 1 2\n").ok());
  EXPECT_FALSE(ParseProcStat("cpu 1 x 3 4\n").ok());
  EXPECT_FALSE(ParseProcStat("").ok());
}

TEST(ProcStatTest, OtherCpuShareIsMachineBusyAndStealMinusOwnOverTheWindow) {
  const ProcStatTimes before = *ParseProcStat(Stat(1000, 100, 5000, 0));
  // One second on 2 CPUs at 100 ticks/s: 200 ticks. Busy 100 + 20, steal 10, idle 70.
  const ProcStatTimes after = *ParseProcStat(Stat(1100, 120, 5070, 10));
  // Our own 0.5 s of CPU: (120 + 10 - 50) / 200.
  EXPECT_DOUBLE_EQ(*OtherCpuShare(before, after, 0.5, 100), 0.4);
  // All of the busy time was ours (and more, by rounding): 0, never negative.
  EXPECT_DOUBLE_EQ(*OtherCpuShare(before, after, 2.0, 100), 0.0);
  // A quiet machine: one core ours, nothing else.
  const ProcStatTimes quiet = *ParseProcStat(Stat(1100, 100, 5100, 0));
  EXPECT_DOUBLE_EQ(*OtherCpuShare(before, quiet, 1.0, 100), 0.0);
  // A busy co-runner on the other core: half the machine.
  const ProcStatTimes hog = *ParseProcStat(Stat(1200, 100, 5000, 0));
  EXPECT_DOUBLE_EQ(*OtherCpuShare(before, hog, 1.0, 100), 0.5);
  EXPECT_GT(*OtherCpuShare(before, hog, 1.0, 100), kContentionThreshold);
  // Too short a window to judge, or counters that went backwards.
  EXPECT_FALSE(OtherCpuShare(before, *ParseProcStat(Stat(1010, 100, 5000, 0)), 0, 100).has_value());
  EXPECT_FALSE(OtherCpuShare(after, before, 0, 100).has_value());
}

TEST(ProcStatTest, TheProbeReadsBeforeAndAfter) {
  std::vector<std::string> texts = {Stat(1000, 0, 1000, 0), Stat(1150, 0, 1050, 30)};
  size_t next = 0;
  ContentionProbe probe([&]() -> absl::StatusOr<std::string> { return texts[std::min(next++, texts.size() - 1)]; });
  const std::optional<double> share = probe.Finish();
  ASSERT_TRUE(share.has_value());
  // (150 + 30 - own) / 230, own a few ticks at most in this test.
  EXPECT_GT(*share, 0.7);
  EXPECT_LE(*share, 180.0 / 230);
  EXPECT_EQ(next, 2u);
  // Unreadable: no share.
  ContentionProbe broken([]() -> absl::StatusOr<std::string> { return absl::UnavailableError("no /proc"); });
  EXPECT_FALSE(broken.Finish().has_value());
  // The real /proc/stat parses.
  absl::StatusOr<std::string> real = ReadProcStat();
  ASSERT_TRUE(real.ok()) << real.status();
  EXPECT_TRUE(ParseProcStat(*real).ok());
}

TEST(SchedulingDelayTest, UpperMeanBoundIsMeanPlusOneSidedT) {
  EXPECT_EQ(UpperMeanBound({}), 0);
  EXPECT_EQ(UpperMeanBound({5}), 5);
  // mean 2, s 1, n 3: 2 + t(0.95, 2) / sqrt(3) = 2 + 2.919986 / 1.732051.
  EXPECT_NEAR(UpperMeanBound({1, 2, 3}), 2 + 2.919986 / std::sqrt(3.0), 1e-5);
  EXPECT_EQ(UpperMeanBound({4, 4, 4, 4}), 4);
}

TEST(SchedulingDelayTest, ProbesWakeupsAndPreemptions) {
  const SchedulingDelay d = MeasureSchedulingDelay(absl::Milliseconds(5), 5, absl::Microseconds(200));
  EXPECT_EQ(d.wakeups, 5);
  EXPECT_GE(d.wakeup_bound_ns, 0);
  EXPECT_TRUE(std::isfinite(d.wakeup_bound_ns));
  EXPECT_GE(d.preemptions, 0);
  EXPECT_EQ(d.preemptions == 0, d.preemption_bound_ns == 0);
  // Nonsense arguments fall back to the defaults rather than spinning forever or never.
  EXPECT_EQ(MeasureSchedulingDelay(absl::Milliseconds(1), 0, absl::Microseconds(100)).wakeups, 100);
}

}  // namespace
}  // namespace fleetmark::engine
