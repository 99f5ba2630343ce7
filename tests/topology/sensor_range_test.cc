// Sensor sanity: impossible readings (a thermal zone at -263200 m°C, a cpuinfo_max_freq
// of 10^23 kHz, a cpu_capacity of -5, a battery at 150 %) are left out with a note in
// the host snapshot, never stored as facts.
#include <string>

#include "engine/common/message_text.h"
#include "engine/common/text.h"
#include "engine/topology/environment.h"
#include "engine/topology/host.h"
#include "engine/topology/host_text.h"
#include "engine/topology/sensor_range.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/topology/fixtures.h"

namespace fleetmark::engine {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::WriteTreeFile;

bool AnyNoteHas(const google::protobuf::RepeatedPtrField<std::string>& notes, const std::string& what) {
  for (const std::string& note : notes) {
    if (note.find(what) != std::string::npos) return true;
  }
  return false;
}

// The recorded ARM board with impossible sensors written into it.
std::string BrokenSensorsBoard(const std::string& name) {
  const std::string root = testing::CopyFixture("2arm-2c", name);
  const std::string cpu = "/sys/devices/system/cpu";
  WriteTreeFile(root, cpu + "/cpu1/cpufreq/cpuinfo_max_freq", "100000000000000000000000\n");
  WriteTreeFile(root, cpu + "/cpu1/cpufreq/scaling_governor", "ondemand\n");
  WriteTreeFile(root, cpu + "/cpu1/cpufreq/scaling_cur_freq", "100000000000000000000000\n");
  WriteTreeFile(root, cpu + "/cpu0/cpu_capacity", "1024\n");
  WriteTreeFile(root, cpu + "/cpu1/cpu_capacity", "-5\n");
  WriteTreeFile(root, "/sys/class/thermal/thermal_zone0/type", "cpu-thermal\n");
  WriteTreeFile(root, "/sys/class/thermal/thermal_zone0/temp", "-263200\n");
  WriteTreeFile(root, "/sys/class/thermal/thermal_zone1/type", "soc-thermal\n");
  WriteTreeFile(root, "/sys/class/thermal/thermal_zone1/temp", "45000\n");
  WriteTreeFile(root, "/sys/class/power_supply/battery/type", "Battery\n");
  WriteTreeFile(root, "/sys/class/power_supply/battery/capacity", "150\n");
  WriteTreeFile(root, "/sys/class/power_supply/battery/status", "Charging\n");
  WriteTreeFile(root, "/sys/class/power_supply/battery/temp", "250\n");
  return root;
}

class SensorSanityTest : public ::testing::TestWithParam<bool> {};

TEST_P(SensorSanityTest, ImpossibleReadingsAreLeftOutWithANote) {
  const std::string root = BrokenSensorsBoard(GetParam() ? "sensors-hwloc" : "sensors-sysfs");
  ASSERT_FALSE(root.empty());
  absl::StatusOr<v1::HostInfo> host = DetectHost({.fsroot = root, .use_hwloc = GetParam()});
  ASSERT_TRUE(host.ok()) << host.status();
  const std::string text = FormatHostText(*host);

  // Frequencies: no class or core above 10 GHz; the 800 MHz of cpu0 is kept.
  for (const v1::CoreKind& kind : host->core_classes()) {
    EXPECT_LE(kind.max_frequency_khz(), 10'000'000u) << text;
    EXPECT_LE(kind.capacity(), 1024u) << text;
  }
  for (const v1::CoreKind& kind : host->core_kinds()) {
    EXPECT_LE(kind.max_frequency_khz(), 10'000'000u) << text;
    EXPECT_LE(kind.capacity(), 1024u) << text;
  }
  for (const v1::CoreInfo& core : host->cores()) {
    EXPECT_LE(core.max_frequency_khz(), 10'000'000u) << text;
  }
  EXPECT_TRUE(AnyNoteHas(host->notes(),
                         "cpu1/cpufreq/cpuinfo_max_freq: 1e+23kHz outside "
                         "10000..1e+07kHz"))
      << text;
  EXPECT_TRUE(AnyNoteHas(host->notes(), "cpu1/cpu_capacity: -5 outside 1..1024")) << text;

  // Thermal zones: the impossible one unknown, the other kept.
  ASSERT_EQ(host->thermal_zones_size(), 2);
  EXPECT_FALSE(host->thermal_zones(0).temperature_known());
  EXPECT_EQ(host->thermal_zones(0).temperature_c(), 0);
  EXPECT_TRUE(host->thermal_zones(1).temperature_known());
  EXPECT_DOUBLE_EQ(host->thermal_zones(1).temperature_c(), 45.0);
  EXPECT_TRUE(AnyNoteHas(host->notes(), "thermal_zone0 (cpu-thermal): -263.2°C outside -40..150°C")) << text;

  // Battery: 150 % is no level; 25.0 °C is.
  ASSERT_EQ(host->batteries_size(), 1);
  EXPECT_EQ(host->batteries(0).level_percent(), -1);
  EXPECT_TRUE(host->batteries(0).temperature_known());
  EXPECT_DOUBLE_EQ(host->batteries(0).temperature_c(), 25.0);
  EXPECT_TRUE(AnyNoteHas(host->notes(), "battery/capacity: 150% outside 0..100%")) << text;
}

INSTANTIATE_TEST_SUITE_P(HwlocAndSysfs, SensorSanityTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "hwloc" : "sysfs"; });

TEST(SensorSanityTest, EnvironmentSnapshotLeavesImpossibleReadingsOut) {
  const std::string root = BrokenSensorsBoard("sensors-env");
  ASSERT_FALSE(root.empty());
  const v1::EnvSnapshot snap = TakeEnvSnapshot(root);
  EXPECT_THAT(snap.temperatures_c(), ElementsAre(45.0));
  EXPECT_THAT(snap.thermal_zone_types(), ElementsAre("soc-thermal"));
  for (uint64_t khz : snap.cpu_frequency_khz()) EXPECT_LE(khz, 10'000'000u);
  std::string notes;
  for (const std::string& note : snap.notes()) notes += note + "\n";
  EXPECT_THAT(notes, HasSubstr("thermal_zone0 (cpu-thermal): -263.2°C outside -40..150°C"));
  EXPECT_THAT(notes, HasSubstr("cpu1/cpufreq/scaling_cur_freq: 1e+23kHz outside"));
}

// Text from a device's files (issue 32, item 11): thermal zone types holding a control
// byte, a byte that is not UTF-8 and an escape sequence were copied byte for byte into
// HostInfo (printed raw by `fleetmark topology`, logged by protobuf as invalid UTF-8)
// and into the snapshot. Both now pass the agent hello's text rule.
TEST(SensorSanityTest, DeviceTextPassesTheHelloTextRule) {
  const std::string root = testing::CopyFixture("2arm-2c", "sensors-text");
  ASSERT_FALSE(root.empty());
  WriteTreeFile(root, "/sys/class/thermal/thermal_zone0/type", std::string("abc\x01\xff", 5));
  WriteTreeFile(root, "/sys/class/thermal/thermal_zone0/temp", "41000\n");
  WriteTreeFile(root, "/sys/class/thermal/thermal_zone1/type", "\x1b[31mred");
  WriteTreeFile(root, "/sys/class/thermal/thermal_zone1/temp", "-263200\n");  // noted with its type
  for (bool hwloc : {true, false}) {
    absl::StatusOr<v1::HostInfo> host = DetectHost({.fsroot = root, .use_hwloc = hwloc});
    ASSERT_TRUE(host.ok()) << host.status();
    EXPECT_TRUE(CheckMessageText(*host, "host", HelloTextRules()).ok())
        << CheckMessageText(*host, "host", HelloTextRules());
    ASSERT_EQ(host->thermal_zones_size(), 2);
    EXPECT_EQ(host->thermal_zones(0).type(), "abc\\x01\\xff");
    EXPECT_EQ(host->thermal_zones(1).type(), "\\x1b[31mred");
    const std::string text = FormatHostText(*host);
    EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
    EXPECT_EQ(text.find('\x01'), std::string::npos) << text;
    EXPECT_TRUE(IsValidUtf8(text)) << text;
  }
  const v1::EnvSnapshot snap = TakeEnvSnapshot(root);
  EXPECT_TRUE(CheckMessageText(snap, "snapshot", HelloTextRules()).ok())
      << CheckMessageText(snap, "snapshot", HelloTextRules());
  EXPECT_THAT(snap.thermal_zone_types(), ElementsAre("abc\\x01\\xff"));
  EXPECT_TRUE(AnyNoteHas(snap.notes(), "(\\x1b[31mred)"));
}

TEST(SensorSanityTest, RangesAreTheDocumentedOnes) {
  using topology_internal::InSensorRange;
  std::vector<std::string> notes;
  EXPECT_TRUE(InSensorRange(-40, topology_internal::kTemperatureRange, "t", &notes));
  EXPECT_TRUE(InSensorRange(150, topology_internal::kTemperatureRange, "t", &notes));
  EXPECT_FALSE(InSensorRange(150.5, topology_internal::kTemperatureRange, "t", &notes));
  EXPECT_TRUE(InSensorRange(10'000, topology_internal::kFrequencyRange, "f", &notes));
  EXPECT_FALSE(InSensorRange(9'999, topology_internal::kFrequencyRange, "f", &notes));
  EXPECT_FALSE(InSensorRange(0, topology_internal::kCapacityRange, "c", &notes));
  EXPECT_TRUE(InSensorRange(1024, topology_internal::kCapacityRange, "c", &notes));
  EXPECT_FALSE(InSensorRange(std::nan(""), topology_internal::kBatteryLevelRange, "b", &notes));
  EXPECT_EQ(notes.size(), 4u);
  EXPECT_THAT(notes, Contains("t: 150.5°C outside -40..150°C, left out"));
}

}  // namespace
}  // namespace fleetmark::engine
