// A case's energy (engine/energy/{best_source,energy_sampler,case_energy}.h): which
// sources measure, the sampler thread on a clock-driven fake RAPL counter (a constant
// power gives E = P·t within the resolution, also across wrap-arounds), cutting a span
// out of the readings, and the per-case arithmetic (gross, net, the t interval over
// processes, `unresolved` instead of a number below the resolution).
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "engine/energy/best_source.h"
#include "engine/energy/case_energy.h"
#include "engine/energy/discover.h"
#include "engine/energy/energy_sampler.h"
#include "engine/measure/verdict.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/engine/energy/test_files.h"

namespace fleetmark::engine::energy {
namespace {

using test_support::FakeFiles;
using test_support::PoweredRaplFiles;
using test_support::TreeFiles;
using ::testing::HasSubstr;

std::optional<EnergyChoice> ChoiceIn(const EnergyFiles& files) {
  return ChooseEnergySources(DiscoverEnergySources(files));
}

TEST(BestSourceTest, TwoRaplPackagesAreSummedWithoutTheirSubZones) {
  const std::optional<EnergyChoice> choice = ChoiceIn(TreeFiles("rapl_two_packages"));
  ASSERT_TRUE(choice.has_value());
  EXPECT_EQ(choice->id, "rapl:package-0+rapl:package-1");
  EXPECT_EQ(choice->sources.size(), 2u);
  EXPECT_EQ(choice->reading, Reading::kCounter);
  EXPECT_DOUBLE_EQ(choice->resolution, 2e-6);  // each package's 1 µJ step
  EXPECT_THAT(choice->covers, HasSubstr("package-1"));
}

TEST(BestSourceTest, PsysIsThePlatformAndTakenAlone) {
  FakeFiles files;
  for (const auto& [zone, name] : {std::pair{"intel-rapl:0", "package-0"}, std::pair{"intel-rapl:1", "psys"}}) {
    const std::string dir = std::string("/sys/class/powercap/") + zone;
    files.Set(dir + "/name", name);
    files.Set(dir + "/energy_uj", "1000");
    files.Set(dir + "/max_energy_range_uj", "262143328850");
  }
  const std::optional<EnergyChoice> choice = ChoiceIn(files);
  ASSERT_TRUE(choice.has_value());
  EXPECT_EQ(choice->id, "rapl:psys");
  EXPECT_EQ(choice->sources.size(), 1u);
}

TEST(BestSourceTest, UnreadableRaplGivesNoChoiceAndTheHwmonOrBatteryOtherwise) {
  EXPECT_FALSE(ChoiceIn(TreeFiles("rapl_denied")).has_value());
  EXPECT_FALSE(ChoiceIn(TreeFiles("no_sensors")).has_value());
  const std::optional<EnergyChoice> ina = ChoiceIn(TreeFiles("ina_board"));
  ASSERT_TRUE(ina.has_value());
  EXPECT_EQ(ina->sources.front().kind, SourceKind::kHwmonEnergy);  // its counter before its power rails
  EXPECT_EQ(ina->reading, Reading::kCounter);
  const std::optional<EnergyChoice> phone = ChoiceIn(TreeFiles("android_ua_negative_discharging"));
  ASSERT_TRUE(phone.has_value());
  EXPECT_EQ(phone->sources.front().kind, SourceKind::kBattery);
}

TEST(EnergySeriesTest, ASpanIsCutByLinearInterpolation) {
  EnergySeries series;
  ASSERT_TRUE(series.Add(10.0, 0).ok());
  ASSERT_TRUE(series.Add(11.0, 4).ok());
  ASSERT_TRUE(series.Add(13.0, 10).ok());
  // E(10.5) = 2, E(12) = 7: 5 J.
  EXPECT_DOUBLE_EQ(*series.JoulesBetween(10.5, 12.0), 5.0);
  EXPECT_DOUBLE_EQ(*series.JoulesBetween(10.0, 13.0), 10.0);
  EXPECT_EQ(series.JoulesBetween(9.0, 12.0).status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(series.JoulesBetween(12.0, 13.5).status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(series.Add(12.0, 11).code(), absl::StatusCode::kInvalidArgument);  // not after 13 s
  EXPECT_EQ(series.Add(14.0, 9).code(), absl::StatusCode::kInvalidArgument);   // lower
}

// 12 W for about 0.4 s through a counter that wraps every 2 J (~0.17 s): E = P·t within
// the counter's µJ step plus, at each end, P x half the longest read kept
// (kMaxReadSeconds): 12 W x 0.5 ms = 6 mJ.
TEST(EnergySamplerTest, ConstantPowerThroughAWrappingCounterGivesPowerTimesTime) {
  constexpr double kWatts = 12.0;
  PoweredRaplFiles files(kWatts, 2'000'000);
  const std::optional<EnergyChoice> choice = ChoiceIn(files);
  ASSERT_TRUE(choice.has_value());
  absl::StatusOr<std::unique_ptr<EnergySampler>> sampler =
      EnergySampler::Start(files, choice->sources, kEnergySamplePeriod);
  ASSERT_TRUE(sampler.ok()) << sampler.status();
  absl::SleepFor(absl::Milliseconds(20));
  const double t0 = MonotonicSeconds();
  absl::SleepFor(absl::Milliseconds(400));
  const double t1 = MonotonicSeconds();
  absl::SleepFor(absl::Milliseconds(20));
  absl::StatusOr<EnergySeries> series = (*sampler)->Stop();
  ASSERT_TRUE(series.ok()) << series.status();
  EXPECT_GE(series->readings().size(), 20u);  // every 5 ms, loosely (a loaded machine)
  absl::StatusOr<double> joules = series->JoulesBetween(t0, t1);
  ASSERT_TRUE(joules.ok()) << joules.status();
  EXPECT_NEAR(*joules, kWatts * (t1 - t0), 2 * kWatts * kMaxReadSeconds / 2 + 1e-6) << "span " << t1 - t0 << " s";
  EXPECT_GE(kWatts * (t1 - t0), 4.0);  // the span crossed at least two wraps
}

TEST(EnergySamplerTest, RefusesNoSourcesAndUnreadableOnes) {
  FakeFiles none;
  EXPECT_EQ(EnergySampler::Start(none, {}, kEnergySamplePeriod).status().code(), absl::StatusCode::kInvalidArgument);
  const std::vector<EnergySource> denied = DiscoverEnergySources(TreeFiles("rapl_denied"));
  ASSERT_FALSE(denied.empty());
  TreeFiles files("rapl_denied");
  EXPECT_EQ(EnergySampler::Start(files, {denied[0]}, kEnergySamplePeriod).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

EnergyChoice Counter(double resolution_j) {
  EnergyChoice choice;
  choice.id = "rapl:package-0";
  choice.covers = "CPU package 0";
  choice.reading = Reading::kCounter;
  choice.resolution = resolution_j;
  choice.update_interval_s = 0.001;
  return choice;
}

// A process at a constant `watts` for `seconds` over `repetitions`, after an idle
// baseline at `idle_watts` of the same length.
ProcessEnergy Constant(double watts, double seconds, uint64_t repetitions, double idle_watts) {
  return {watts * seconds, seconds, repetitions, idle_watts * seconds, seconds, false};
}

TEST(CaseEnergyTest, ConstantPowerGivesKnownGrossNetAndPower) {
  // 20 W for 2 s over 100 repetitions of 50 tasks, idle 5 W: 0.4 J gross per
  // repetition, 0.3 J net, 6 mJ net per task.
  const v1::CaseEnergy e = SummarizeCaseEnergy(Counter(1e-6), {Constant(20, 2, 100, 5)}, 50);
  EXPECT_TRUE(e.unavailable().empty());
  EXPECT_FALSE(e.unresolved()) << e.unresolved_reason();
  EXPECT_EQ(e.source(), "rapl:package-0");
  EXPECT_EQ(e.processes(), 1u);
  EXPECT_NEAR(e.joules_per_repetition(), 0.4, 1e-12);
  EXPECT_NEAR(e.net_joules_per_repetition(), 0.3, 1e-12);
  EXPECT_NEAR(e.joules_per_task(), 0.008, 1e-12);
  EXPECT_NEAR(e.net_joules_per_task(), 0.006, 1e-12);
  EXPECT_NEAR(e.mean_power_watts(), 20, 1e-12);
  EXPECT_NEAR(e.baseline_power_watts(), 5, 1e-12);
  // One process: no interval.
  EXPECT_EQ(e.joules_per_repetition_low(), 0);
  EXPECT_EQ(e.joules_per_repetition_high(), 0);
}

TEST(CaseEnergyTest, TheIntervalOverProcessesIsStudentT) {
  // Gross per repetition 1, 2, 3 J (mean 2, s = 1); idle 0.5 W over each 1 s window.
  const std::vector<ProcessEnergy> processes = {Constant(10, 1, 10, 0.5), Constant(20, 1, 10, 0.5),
                                                Constant(30, 1, 10, 0.5)};
  const v1::CaseEnergy e = SummarizeCaseEnergy(Counter(1e-6), processes, 1);
  ASSERT_FALSE(e.unresolved()) << e.unresolved_reason();
  const double half = StudentTQuantile(0.975, 2) / std::sqrt(3.0);  // 2.484
  EXPECT_NEAR(e.joules_per_repetition(), 2, 1e-12);
  EXPECT_NEAR(e.joules_per_repetition_low(), 2 - half, 1e-9);
  EXPECT_NEAR(e.joules_per_repetition_high(), 2 + half, 1e-9);
  EXPECT_NEAR(e.net_joules_per_repetition(), 1.95, 1e-12);
  EXPECT_NEAR(e.net_joules_per_repetition_high() - e.net_joules_per_repetition(), half, 1e-9);
  EXPECT_EQ(e.process_joules_per_repetition_size(), 3);
  EXPECT_NEAR(e.mean_power_watts(), 20, 1e-12);
  EXPECT_NEAR(e.seconds(), 3, 1e-12);
}

TEST(CaseEnergyTest, BelowTheResolutionIsUnresolvedNeverANumber) {
  // A 15.3 mJ step (a coarse counter) and 5 mJ measured: no number at all.
  const v1::CaseEnergy coarse = SummarizeCaseEnergy(Counter(0.0153), {Constant(0.5, 0.01, 10, 0)}, 1);
  EXPECT_TRUE(coarse.unresolved());
  EXPECT_THAT(coarse.unresolved_reason(), HasSubstr("process 1: 0.005 J below the source's resolution 0.0153 J"));
  EXPECT_EQ(coarse.joules_per_repetition(), 0);
  EXPECT_EQ(coarse.net_joules_per_task(), 0);
  EXPECT_EQ(coarse.mean_power_watts(), 0);
  EXPECT_EQ(coarse.process_joules_per_repetition_size(), 0);
  // Gross resolved, but the case draws the idle power: its net is within the step of 0.
  const v1::CaseEnergy idle = SummarizeCaseEnergy(Counter(0.01), {Constant(5, 1, 10, 5)}, 1);
  EXPECT_TRUE(idle.unresolved());
  EXPECT_THAT(idle.unresolved_reason(), HasSubstr("cannot be told from idle"));
}

TEST(CaseEnergyTest, APowerSourceResolvesItsStepTimesTheSpanAndNotBelowItsUpdateInterval) {
  EnergyChoice battery;
  battery.id = "battery:battery";
  battery.reading = Reading::kPower;
  battery.resolution = 0.0038;  // 1 mA x 3.8 V
  battery.update_interval_s = 1.0;
  const v1::CaseEnergy fast = SummarizeCaseEnergy(battery, {Constant(2, 0.5, 5, 1)}, 1);
  EXPECT_TRUE(fast.unresolved());
  EXPECT_THAT(fast.unresolved_reason(), HasSubstr("shorter than the source's update interval 1 s"));
  const v1::CaseEnergy slow = SummarizeCaseEnergy(battery, {Constant(2, 4, 5, 1)}, 1);
  EXPECT_FALSE(slow.unresolved()) << slow.unresolved_reason();
  EXPECT_NEAR(slow.resolution_joules(), 0.0038 * 4, 1e-12);
  EXPECT_NEAR(slow.net_joules_per_repetition(), 0.8, 1e-12);
}

TEST(CaseEnergyTest, ChargingIsMarkedAndMissingProcessesAreUnavailable) {
  ProcessEnergy charging = Constant(3, 2, 4, 1);
  charging.charging = true;
  EXPECT_TRUE(SummarizeCaseEnergy(Counter(1e-6), {charging}, 1).charging());
  EXPECT_THAT(SummarizeCaseEnergy(Counter(1e-6), {}, 1).unavailable(), HasSubstr("no process"));
  ProcessEnergy no_baseline = Constant(3, 2, 4, 1);
  no_baseline.baseline_seconds = 0;
  EXPECT_THAT(SummarizeCaseEnergy(Counter(1e-6), {no_baseline}, 1).unavailable(),
              HasSubstr("process 1 has no timed span or no idle baseline"));
  EXPECT_EQ(UnavailableCaseEnergy("no RAPL zone").unavailable(), "no RAPL zone");
}

}  // namespace
}  // namespace fleetmark::engine::energy
