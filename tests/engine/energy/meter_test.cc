// Known-answer tests of the energy meters on fake sources (test_files.h FakeFiles): a
// constant power read through a wrapping RAPL counter gives E = P·t within the
// resolution; wrap-around deltas; power-only sources integrated by the trapezoidal rule
// (exact for constant and linear power); a battery's V·I and its charging samples.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "engine/energy/counter_delta.h"
#include "engine/energy/discover.h"
#include "engine/energy/energy_meter.h"
#include "engine/energy/power_integral.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/engine/energy/test_files.h"

namespace fleetmark::engine::energy {
namespace {

using test_support::FakeFiles;
using ::testing::HasSubstr;

constexpr char kZone[] = "/sys/class/powercap/intel-rapl:0";
constexpr char kPower[] = "/sys/class/hwmon/hwmon0/power1_input";
constexpr char kBattery[] = "/sys/class/power_supply/battery";

// The one source `files` shows.
EnergySource Only(const FakeFiles& files) {
  std::vector<EnergySource> sources = DiscoverEnergySources(files);
  EXPECT_EQ(sources.size(), 1u);
  return sources.empty() ? EnergySource{} : sources[0];
}

// A RAPL zone whose counter holds floor(energy) µJ modulo `range`, as the hardware's.
class FakeRapl {
 public:
  FakeRapl(FakeFiles& files, uint64_t range_uj, uint64_t start_uj) : files_(files), range_(range_uj), uj_(start_uj) {
    files_.Set(absl::StrCat(kZone, "/name"), "package-0");
    files_.Set(absl::StrCat(kZone, "/max_energy_range_uj"), absl::StrCat(range_uj));
    Publish();
  }
  void AddJoules(double joules) {
    exact_uj_ += joules * 1e6;
    Publish();
  }

 private:
  void Publish() {
    const uint64_t total = uj_ + static_cast<uint64_t>(std::floor(exact_uj_));
    files_.Set(absl::StrCat(kZone, "/energy_uj"), absl::StrCat(total % range_));
  }
  FakeFiles& files_;
  uint64_t range_;
  uint64_t uj_;
  double exact_uj_ = 0;
};

TEST(EnergyMeterTest, ConstantPowerThroughAWrappingCounterGivesPowerTimesTime) {
  FakeFiles files;
  // 37.3 W for 120 s = 4476 J through a 1 kJ counter starting at 900 J: five wraps. The
  // counter truncates to whole µJ, so the meter may read up to 1 µJ (its resolution) low.
  FakeRapl rapl(files, 1'000'000'000, 900'000'000);
  const EnergySource source = Only(files);
  ASSERT_TRUE(source.readable) << source.why_not;
  constexpr double kWatts = 37.3;
  constexpr double kStep = 0.375;  // s between samples
  absl::StatusOr<EnergyMeter> meter = EnergyMeter::Start(files, source, 5.0);
  ASSERT_TRUE(meter.ok()) << meter.status();
  for (int i = 1; i <= 320; ++i) {
    rapl.AddJoules(kWatts * kStep);
    ASSERT_TRUE(meter->Sample(5.0 + i * kStep).ok());
  }
  EXPECT_DOUBLE_EQ(meter->seconds(), 120.0);
  EXPECT_LE(std::fabs(meter->joules() - kWatts * 120.0), source.resolution + 1e-9) << meter->joules();
  EXPECT_NEAR(meter->joules() / meter->seconds(), kWatts, 1e-6);  // mean power
  EXPECT_EQ(meter->wraps(), 5);
}

TEST(EnergyMeterTest, CounterDeltaAcrossAWrap) {
  constexpr uint64_t kRange = 262143328850;
  EXPECT_EQ(*CounterDelta(100, 250, kRange), 150u);
  EXPECT_EQ(*CounterDelta(5, 5, kRange), 0u);
  EXPECT_EQ(*CounterDelta(kRange - 328850, 91921150, kRange), 92250000u);
  EXPECT_EQ(*CounterDelta(kRange, 0, kRange), 0u);
  EXPECT_EQ(*CounterDelta(0, kRange, kRange), kRange);
  EXPECT_EQ(CounterDelta(kRange + 1, 5, kRange).status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(CounterDelta(5, kRange + 1, kRange).status().code(), absl::StatusCode::kOutOfRange);
  absl::StatusOr<uint64_t> reset = CounterDelta(500, 100, 0);
  EXPECT_EQ(reset.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(reset.status().message(), HasSubstr("a wrap cannot be told from a reset"));
  EXPECT_EQ(*CounterDelta(100, UINT64_MAX, 0), UINT64_MAX - 100);
}

TEST(EnergyMeterTest, ACounterGoingBackWithoutARangeFailsAndKeepsTheMeter) {
  FakeFiles files;
  const std::string path = "/sys/class/hwmon/hwmon0/energy1_input";
  files.Set("/sys/class/hwmon/hwmon0/name", "scmi_sensors");
  files.Set(path, "5000000");
  const EnergySource source = Only(files);
  ASSERT_EQ(source.kind, SourceKind::kHwmonEnergy);
  absl::StatusOr<EnergyMeter> meter = EnergyMeter::Start(files, source, 0);
  ASSERT_TRUE(meter.ok()) << meter.status();
  files.Set(path, "7500000");
  ASSERT_TRUE(meter->Sample(1).ok());
  files.Set(path, "100");  // a reset (driver reload): no range to call it a wrap
  EXPECT_EQ(meter->Sample(2).code(), absl::StatusCode::kFailedPrecondition);
  files.Set(path, "garbage");
  EXPECT_EQ(meter->Sample(3).code(), absl::StatusCode::kInvalidArgument);
  files.Deny(path);
  EXPECT_EQ(meter->Sample(4).code(), absl::StatusCode::kPermissionDenied);
  EXPECT_DOUBLE_EQ(meter->joules(), 2.5);
  EXPECT_EQ(meter->samples(), 2);
  EXPECT_EQ(meter->Sample(1).code(), absl::StatusCode::kInvalidArgument);  // not after the last sample
}

TEST(EnergyMeterTest, ConstantPowerOnlySourceIntegratesExactly) {
  FakeFiles files;
  files.Set("/sys/class/hwmon/hwmon0/name", "ina226");
  files.Set(kPower, "2500000");  // 2.5 W
  const EnergySource source = Only(files);
  ASSERT_EQ(source.reading, Reading::kPower);
  absl::StatusOr<EnergyMeter> meter = EnergyMeter::Start(files, source, 0);
  ASSERT_TRUE(meter.ok()) << meter.status();
  for (double t : {0.3, 1.1, 2.0, 5.0}) ASSERT_TRUE(meter->Sample(t).ok());  // uneven steps
  EXPECT_NEAR(meter->joules(), 2.5 * 5.0, 1e-12);
  EXPECT_EQ(meter->samples(), 5);
}

TEST(EnergyMeterTest, LinearPowerRampIsExactUnderTheTrapezoidalRule) {
  FakeFiles files;
  files.Set("/sys/class/hwmon/hwmon0/name", "ina226");
  files.Set(kPower, "1000000");
  const EnergySource source = Only(files);
  absl::StatusOr<EnergyMeter> meter = EnergyMeter::Start(files, source, 0);
  ASSERT_TRUE(meter.ok()) << meter.status();
  // P(t) = 1 + 0.5 t W for t = 0..10 s: E = 10 + 0.25 * 100 = 35 J.
  for (int t = 1; t <= 10; ++t) {
    files.Set(kPower, absl::StrCat(1'000'000 + 500'000 * t));
    ASSERT_TRUE(meter->Sample(t).ok());
  }
  EXPECT_NEAR(meter->joules(), 35.0, 1e-9);
}

TEST(EnergyMeterTest, PowerIntegralRefusesBadSamplesAndKeepsItsSum) {
  PowerIntegral integral;
  EXPECT_EQ(integral.joules(), 0);
  ASSERT_TRUE(integral.Add(0, 2).ok());
  EXPECT_EQ(integral.joules(), 0);  // one sample: no interval yet
  ASSERT_TRUE(integral.Add(1, 4).ok());
  EXPECT_DOUBLE_EQ(integral.joules(), 3);
  EXPECT_EQ(integral.Add(1, 4).code(), absl::StatusCode::kInvalidArgument);    // same time
  EXPECT_EQ(integral.Add(0.5, 4).code(), absl::StatusCode::kInvalidArgument);  // earlier
  EXPECT_EQ(integral.Add(2, -1).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(integral.Add(2, NAN).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(integral.Add(INFINITY, 1).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_DOUBLE_EQ(integral.joules(), 3);
  EXPECT_DOUBLE_EQ(integral.seconds(), 1);
  EXPECT_EQ(integral.samples(), 2);
}

TEST(EnergyMeterTest, BatteryGivesVoltageTimesCurrentAndFlagsAPlugInMidMeasurement) {
  FakeFiles files;
  files.Set(absl::StrCat(kBattery, "/type"), "Battery");
  files.Set(absl::StrCat(kBattery, "/status"), "Discharging");
  files.Set(absl::StrCat(kBattery, "/current_now"), "-500000");  // 0.5 A out
  files.Set(absl::StrCat(kBattery, "/voltage_now"), "3800000");  // 3.8 V
  const EnergySource source = Only(files);
  ASSERT_TRUE(source.readable) << source.why_not;
  absl::StatusOr<EnergyMeter> meter = EnergyMeter::Start(files, source, 0);
  ASSERT_TRUE(meter.ok()) << meter.status();
  for (int t = 1; t <= 60; ++t) ASSERT_TRUE(meter->Sample(t).ok());
  EXPECT_NEAR(meter->joules(), 1.9 * 60, 1e-9);  // 114 J
  EXPECT_FALSE(meter->saw_charging());
  // Plugged in: current flows into the battery (positive by this battery's convention)
  // before the status file says so: the sample counts 0 W and marks the measurement.
  files.Set(absl::StrCat(kBattery, "/current_now"), "800000");
  ASSERT_TRUE(meter->Sample(61).ok());
  EXPECT_TRUE(meter->saw_charging());
  EXPECT_NEAR(meter->joules(), 114 + 1.9 / 2, 1e-9);
  // A voltage no battery has is an error naming the file, the meter unchanged.
  files.Set(absl::StrCat(kBattery, "/voltage_now"), "0");
  absl::Status bad = meter->Sample(62);
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.message(), HasSubstr("voltage_now"));
  EXPECT_NEAR(meter->joules(), 114 + 1.9 / 2, 1e-9);
}

}  // namespace
}  // namespace fleetmark::engine::energy
