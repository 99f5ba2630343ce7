// Batteries as energy sources on recorded Android trees (trees/android_*): units (µA or
// mA, µV or mV) and the discharge sign detected and recorded, charging and external
// power flagged; and the detection rule itself (battery_sources.h).
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "engine/energy/battery_sources.h"
#include "engine/energy/discover.h"
#include "engine/energy/energy_meter.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/engine/energy/test_files.h"

namespace fleetmark::engine::energy {
namespace {

using test_support::TreeFiles;
using ::testing::Contains;
using ::testing::HasSubstr;

// The tree's one source, which must be its battery.
EnergySource OnlyBattery(const TreeFiles& files) {
  std::vector<EnergySource> sources = DiscoverEnergySources(files);
  EXPECT_EQ(sources.size(), 1u);
  if (sources.empty()) return {};
  EXPECT_EQ(sources[0].name, "battery:battery");
  EXPECT_EQ(sources[0].kind, SourceKind::kBattery);
  EXPECT_EQ(sources[0].reading, Reading::kPower);
  EXPECT_TRUE(sources[0].readable) << sources[0].why_not;
  return sources[0];
}

// Joules a meter reads from `source` over samples at 0, 10, 20, 30 s.
double JoulesOver30s(const TreeFiles& files, const EnergySource& source, bool* saw_charging) {
  absl::StatusOr<EnergyMeter> meter = EnergyMeter::Start(files, source, 0);
  EXPECT_TRUE(meter.ok()) << meter.status();
  if (!meter.ok()) return -1;
  for (double t : {10.0, 20.0, 30.0}) EXPECT_TRUE(meter->Sample(t).ok());
  *saw_charging = meter->saw_charging();
  return meter->joules();
}

TEST(BatterySourceTest, MicroampsNegativeWhileDischarging) {
  TreeFiles files("android_ua_negative_discharging");
  const EnergySource battery = OnlyBattery(files);
  EXPECT_DOUBLE_EQ(battery.convention.current_scale_a, 1e-6);
  EXPECT_DOUBLE_EQ(battery.convention.voltage_scale_v, 1e-6);
  EXPECT_EQ(battery.convention.discharge_sign, -1);
  EXPECT_THAT(battery.convention.evidence, HasSubstr("current_now -412000 while Discharging: negative = discharging"));
  EXPECT_THAT(battery.convention.evidence, HasSubstr("µA"));
  EXPECT_FALSE(battery.charging);
  EXPECT_FALSE(battery.on_external_power);  // usb online 0
  EXPECT_THAT(battery.notes, Contains(HasSubstr("charge_counter present")));
  EXPECT_NEAR(battery.resolution, 1e-6 * 3.871, 1e-12);  // 1 µA at 3.871 V
  EXPECT_THAT(battery.covers, HasSubstr("not its consumption while charging"));
  bool charging = true;
  EXPECT_NEAR(JoulesOver30s(files, battery, &charging), 0.412 * 3.871 * 30, 1e-9);
  EXPECT_FALSE(charging);
}

TEST(BatterySourceTest, MilliampsPositiveWhileDischarging) {
  TreeFiles files("android_ma_positive_discharging");
  const EnergySource battery = OnlyBattery(files);
  EXPECT_DOUBLE_EQ(battery.convention.current_scale_a, 1e-3);
  EXPECT_DOUBLE_EQ(battery.convention.voltage_scale_v, 1e-6);
  EXPECT_EQ(battery.convention.discharge_sign, 1);
  EXPECT_THAT(battery.convention.evidence, HasSubstr("positive = discharging"));
  EXPECT_THAT(battery.convention.evidence, HasSubstr("mA"));
  EXPECT_THAT(battery.resolution_text, HasSubstr("current_now in mA"));
  bool charging = true;
  EXPECT_NEAR(JoulesOver30s(files, battery, &charging), 0.385 * 3.902 * 30, 1e-9);
  EXPECT_FALSE(charging);
}

TEST(BatterySourceTest, ChargingOverUsbIsFlaggedAndCountsNoConsumption) {
  TreeFiles files("android_ua_positive_charging");
  const EnergySource battery = OnlyBattery(files);
  EXPECT_EQ(battery.convention.discharge_sign, -1);  // positive into the battery
  EXPECT_TRUE(battery.charging);
  EXPECT_TRUE(battery.on_external_power);
  EXPECT_THAT(battery.notes, Contains(HasSubstr("on external power (usb online)")));
  bool charging = false;
  EXPECT_EQ(JoulesOver30s(files, battery, &charging), 0);
  EXPECT_TRUE(charging);
}

TEST(BatterySourceTest, ChargingOnMainsInMilliampsAndMillivolts) {
  TreeFiles files("android_ma_negative_charging");
  const EnergySource battery = OnlyBattery(files);
  EXPECT_DOUBLE_EQ(battery.convention.current_scale_a, 1e-3);
  EXPECT_DOUBLE_EQ(battery.convention.voltage_scale_v, 1e-3);
  EXPECT_EQ(battery.convention.discharge_sign, 1);  // negative into the battery
  EXPECT_THAT(battery.convention.evidence, HasSubstr("voltage_now 4105: mV"));
  EXPECT_TRUE(battery.charging);
  EXPECT_TRUE(battery.on_external_power);
  EXPECT_THAT(battery.notes, Contains(HasSubstr("on external power (ac online)")));
}

TEST(BatterySourceTest, ConventionRules) {
  using internal::DetectBatteryConvention;
  struct Case {
    int64_t current;
    int64_t voltage;
    const char* status;
    double current_scale;
    double voltage_scale;
    int sign;
  };
  for (const Case& c : std::vector<Case>{
           {-412000, 3871000, "Discharging", 1e-6, 1e-6, -1},
           {412000, 3871000, "Discharging", 1e-6, 1e-6, 1},
           {-9999, 3871000, "Discharging", 1e-3, 1e-6, -1},  // just under the µA threshold: mA
           {10000, 3871000, "Charging", 1e-6, 1e-6, -1},     // at the threshold: µA
           {1200, 3871, "Charging", 1e-3, 1e-3, -1},
           {0, 3871000, "Discharging", 1e-6, 1e-6, 0},  // no current: the voltage's scale, no sign
           {0, 3871, "Discharging", 1e-3, 1e-3, 0},
           {-300000, 4350000, "Full", 1e-6, 1e-6, 0},
           {-300000, 4350000, "Not charging", 1e-6, 1e-6, 0},
           {INT64_MIN, 3871000, "Discharging", 1e-6, 1e-6, -1},
           {INT64_MAX, 3871000, "Charging", 1e-6, 1e-6, -1},
       }) {
    absl::StatusOr<BatteryConvention> convention = DetectBatteryConvention(c.current, c.voltage, c.status);
    ASSERT_TRUE(convention.ok()) << c.current << " " << c.voltage << ": " << convention.status();
    EXPECT_DOUBLE_EQ(convention->current_scale_a, c.current_scale) << c.current;
    EXPECT_DOUBLE_EQ(convention->voltage_scale_v, c.voltage_scale) << c.voltage;
    EXPECT_EQ(convention->discharge_sign, c.sign) << c.current << " " << c.status;
    EXPECT_FALSE(convention->evidence.empty());
  }
  for (int64_t voltage : {int64_t{0}, int64_t{-3800000}, int64_t{500}, int64_t{999}, int64_t{100000}, int64_t{150000},
                          int64_t{70000000}, INT64_MAX, INT64_MIN}) {
    absl::StatusOr<BatteryConvention> convention = DetectBatteryConvention(-400000, voltage, "Discharging");
    EXPECT_EQ(convention.status().code(), absl::StatusCode::kInvalidArgument) << voltage;
    EXPECT_THAT(convention.status().message(), HasSubstr("voltage_now")) << voltage;
  }
}

}  // namespace
}  // namespace fleetmark::engine::energy
