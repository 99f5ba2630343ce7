// Energy source discovery on recorded sysfs trees (trees/): RAPL zones with their
// names, coverage, ranges and denied counters; AMD zones and amd_energy/amdgpu hwmon
// channels; an INA board's rails by label; malformed files; a host with no sensor.
#include "engine/energy/discover.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "engine/energy/energy_meter.h"
#include "engine/energy/sysfs_value.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/engine/energy/test_files.h"

namespace fleetmark::engine::energy {
namespace {

using test_support::TreeFiles;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::vector<std::string> Names(const std::vector<EnergySource>& sources) {
  std::vector<std::string> names;
  for (const EnergySource& source : sources) names.push_back(source.name);
  return names;
}

TEST(EnergyDiscoveryTest, RaplTwoPackagesAreNamedByTheirNameFilesWithRangeAndCoverage) {
  TreeFiles files("rapl_two_packages");
  const std::vector<EnergySource> sources = DiscoverEnergySources(files);
  ASSERT_THAT(Names(sources),
              ElementsAre("rapl:package-0", "rapl:package-0/dram", "rapl:package-1", "rapl:package-1/dram"));
  for (const EnergySource& source : sources) {
    EXPECT_TRUE(source.readable) << source.name << ": " << source.why_not;
    EXPECT_EQ(source.kind, SourceKind::kRapl);
    EXPECT_EQ(source.reading, Reading::kCounter);
    EXPECT_DOUBLE_EQ(source.resolution, 1e-6);
    EXPECT_DOUBLE_EQ(source.update_interval_s, 1e-3);
    EXPECT_THAT(source.resolution_text, HasSubstr("1 ms"));
    EXPECT_TRUE(source.notes.empty()) << source.notes.front();
  }
  EXPECT_EQ(sources[0].max_range_uj, 262143328850u);
  EXPECT_EQ(sources[1].max_range_uj, 65712999613u);
  EXPECT_EQ(sources[0].value_path, "/sys/class/powercap/intel-rapl:0/energy_uj");
  EXPECT_EQ(sources[0].parent, "");
  EXPECT_EQ(sources[3].parent, "rapl:package-1");
  EXPECT_THAT(sources[0].covers, HasSubstr("CPU package-0"));
  EXPECT_THAT(sources[0].covers, HasSubstr("not the DRAM"));
  EXPECT_THAT(sources[3].covers, HasSubstr("DRAM attached to package-1 (not included"));
  EXPECT_EQ(EnergyUnavailableReason(sources), "");
}

TEST(EnergyDiscoveryTest, RaplWrapAroundMidMeasurementGivesTheRightDeltas) {
  TreeFiles files("rapl_two_packages");
  const std::vector<EnergySource> sources = DiscoverEnergySources(files);
  ASSERT_EQ(sources.size(), 4u);
  std::vector<EnergyMeter> meters;
  for (const EnergySource& source : sources) {
    absl::StatusOr<EnergyMeter> meter = EnergyMeter::Start(files, source, 100.0);
    ASSERT_TRUE(meter.ok()) << meter.status();
    meters.push_back(*std::move(meter));
  }
  files.Overlay("rapl_two_packages.later");  // ten seconds later; package-1 has wrapped
  for (EnergyMeter& meter : meters) ASSERT_TRUE(meter.Sample(110.0).ok()) << meter.source().name;
  EXPECT_NEAR(meters[0].joules(), 85.5, 1e-6);
  EXPECT_NEAR(meters[1].joules(), 12.0, 1e-6);
  EXPECT_NEAR(meters[2].joules(), 92.25, 1e-6);  // 328850 µJ to the range's end + 91921150 µJ
  EXPECT_NEAR(meters[3].joules(), 11.5, 1e-6);
  EXPECT_EQ(meters[0].wraps(), 0);
  EXPECT_EQ(meters[2].wraps(), 1);
  EXPECT_DOUBLE_EQ(meters[2].seconds(), 10.0);
  EXPECT_NEAR(meters[2].joules() / meters[2].seconds(), 9.225, 1e-9);  // mean W
}

TEST(EnergyDiscoveryTest, UnreadableEnergyUjIsReportedAsSuchWithTheFix) {
  TreeFiles files("rapl_denied");
  const std::vector<EnergySource> sources = DiscoverEnergySources(files);
  ASSERT_THAT(Names(sources),
              ElementsAre("rapl:package-0", "rapl:package-0/core", "rapl:package-0/uncore", "rapl:psys"));
  for (const EnergySource& source : sources) {
    EXPECT_FALSE(source.readable) << source.name;
    EXPECT_THAT(source.why_not, StartsWith("permission denied: " + source.value_path));
    EXPECT_THAT(source.why_not, HasSubstr("root-only since Linux 5.10"));
    EXPECT_THAT(source.why_not, HasSubstr("docs/energy.md"));
    // What the zone is stays known: only the counter is denied.
    EXPECT_EQ(source.max_range_uj, 262143328850u);
    absl::StatusOr<EnergyMeter> meter = EnergyMeter::Start(files, source, 0);
    EXPECT_EQ(meter.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(meter.status().message(), HasSubstr("permission denied"));
  }
  EXPECT_THAT(sources[1].covers, HasSubstr("cores of package-0 (included in it)"));
  EXPECT_THAT(sources[2].covers, HasSubstr("integrated GPU"));
  EXPECT_THAT(sources[3].covers, HasSubstr("platform"));
  EXPECT_THAT(EnergyUnavailableReason(sources), StartsWith("no readable source: rapl:package-0 (permission denied"));
}

TEST(EnergyDiscoveryTest, AmdZonesAndAmdHwmonChannels) {
  TreeFiles files("amd_zones");
  const std::vector<EnergySource> sources = DiscoverEnergySources(files);
  ASSERT_THAT(Names(sources),
              ElementsAre("rapl:package-0", "rapl:package-0/core", "hwmon:amd_energy/Ecore000",
                          "hwmon:amd_energy/Ecore001", "hwmon:amd_energy/Esocket0", "hwmon:amdgpu/PPT"));
  for (const EnergySource& source : sources) EXPECT_TRUE(source.readable) << source.name << ": " << source.why_not;
  EXPECT_EQ(sources[0].max_range_uj, 65712999613u);
  EXPECT_EQ(sources[2].kind, SourceKind::kHwmonEnergy);
  EXPECT_EQ(sources[2].reading, Reading::kCounter);
  EXPECT_EQ(sources[2].max_range_uj, 0u);  // a 64-bit hwmon counter: no wrap known
  EXPECT_THAT(sources[4].covers, HasSubstr("Esocket0"));
  EXPECT_EQ(sources[4].value_path, "/sys/class/hwmon/hwmon1/energy17_input");
  // amdgpu has only power1_average: used, with a note that it is an average.
  EXPECT_EQ(sources[5].kind, SourceKind::kHwmonPower);
  EXPECT_EQ(sources[5].reading, Reading::kPower);
  EXPECT_EQ(sources[5].value_path, "/sys/class/hwmon/hwmon2/power1_average");
  ASSERT_EQ(sources[5].notes.size(), 1u);
  EXPECT_THAT(sources[5].notes[0], HasSubstr("an average"));
}

TEST(EnergyDiscoveryTest, InaBoardRailsCarryTheirLabelsAndUpdateInterval) {
  TreeFiles files("ina_board");
  const std::vector<EnergySource> sources = DiscoverEnergySources(files);
  // The INA3221 (voltages and currents only) and the thermal sensor are no sources.
  ASSERT_THAT(Names(sources), ElementsAre("hwmon:ina226 vdd_cpu/power1", "hwmon:ina226 vdd_gpu/power1",
                                          "hwmon:scmi_sensors/BIG_CPU_ENERGY", "hwmon:scmi_sensors/LITTLE_CPU_ENERGY"));
  EXPECT_THAT(sources[0].covers, HasSubstr("rail \"vdd_cpu\" through the ina226 shunt monitor"));
  EXPECT_DOUBLE_EQ(sources[0].update_interval_s, 0.002);
  EXPECT_DOUBLE_EQ(sources[0].resolution, 1e-6);
  EXPECT_THAT(sources[0].resolution_text, HasSubstr("every 2 ms"));
  EXPECT_EQ(sources[2].kind, SourceKind::kHwmonEnergy);
  EXPECT_THAT(sources[2].covers, HasSubstr("BIG_CPU_ENERGY"));
  // The recorded rail holds 1.5325 W: over 4 s a power meter gives 6.13 J.
  absl::StatusOr<EnergyMeter> meter = EnergyMeter::Start(files, sources[0], 1.0);
  ASSERT_TRUE(meter.ok()) << meter.status();
  ASSERT_TRUE(meter->Sample(3.0).ok());
  ASSERT_TRUE(meter->Sample(5.0).ok());
  EXPECT_NEAR(meter->joules(), 6.13, 1e-9);
  EXPECT_EQ(meter->samples(), 3);
}

TEST(EnergyDiscoveryTest, MalformedFilesMakeSourcesUnreadableWithTheirReasonNeverACrash) {
  TreeFiles files("malformed");
  const std::vector<EnergySource> sources = DiscoverEnergySources(files);
  ASSERT_THAT(Names(sources),
              ElementsAre("rapl:package-0", "rapl:intel-rapl:1", "rapl:package-2", "rapl:package-3", "hwmon:bad/power1",
                          "hwmon:bad/power2", "hwmon:bad/energy1", "battery:BAT1", "battery:BAT2", "battery:battery"));
  const std::vector<std::string> reasons = {
      "intel-rapl:0/energy_uj: \"garbage\" is not an integer",
      "intel-rapl:1/energy_uj: -5 is negative",
      "intel-rapl:2/energy_uj: \"99999999999999999999999999\" is beyond the 64-bit range",
      "300000000000 above max_energy_range_uj 262143328850",
      "hwmon0/power1_input: empty, an integer expected",
      "hwmon0/power2_input: -3000 is negative",
      "hwmon0/energy1_input: \"12 34\" is not an integer",
      "voltage_now 12 is no battery voltage in µV or mV",
      "has no current_now and voltage_now",
      "battery/current_now: \"NaN\" is not an integer",
  };
  for (std::size_t i = 0; i < sources.size(); ++i) {
    EXPECT_FALSE(sources[i].readable) << sources[i].name;
    EXPECT_THAT(sources[i].why_not, HasSubstr(reasons[i])) << sources[i].name;
    EXPECT_EQ(EnergyMeter::Start(files, sources[i], 0).status().code(), absl::StatusCode::kFailedPrecondition);
  }
  // An empty or negative range is no range: noted, and a decrease will be an error.
  EXPECT_THAT(sources[0].notes, ElementsAre(HasSubstr("max_energy_range_uj unknown")));
  EXPECT_EQ(sources[1].max_range_uj, 0u);
  EXPECT_DOUBLE_EQ(sources[4].update_interval_s, 0);  // update_interval -7 ignored
  EXPECT_THAT(EnergyUnavailableReason(sources), StartsWith("no readable source: rapl:package-0 ("));
}

TEST(EnergyDiscoveryTest, AHostWithNoSensorSaysWhy) {
  // A mains supply, a temperature sensor and a wireless mouse's battery (scope Device).
  TreeFiles files("no_sensors");
  const std::vector<EnergySource> sources = DiscoverEnergySources(files);
  EXPECT_TRUE(sources.empty());
  EXPECT_EQ(EnergyUnavailableReason(sources),
            "no RAPL zone in /sys/class/powercap, no hwmon power or energy channel in /sys/class/hwmon, no battery in "
            "/sys/class/power_supply");
}

TEST(EnergyDiscoveryTest, FsrootMustBeADirectory) {
  absl::StatusOr<std::vector<EnergySource>> none = DiscoverEnergySources("/nonexistent/fleetmark-energy");
  EXPECT_EQ(none.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(none.status().message(), HasSubstr("\"/nonexistent/fleetmark-energy\" is not a directory"));
  absl::StatusOr<std::vector<EnergySource>> tree = DiscoverEnergySources(test_support::TreeDir("rapl_two_packages"));
  ASSERT_TRUE(tree.ok()) << tree.status();
  EXPECT_EQ(tree->size(), 4u);
}

TEST(EnergyDiscoveryTest, RepeatedNamesAreMadeUnique) {
  test_support::FakeFiles files;
  for (const char* device : {"hwmon0", "hwmon1"}) {
    files.Set(std::string("/sys/class/hwmon/") + device + "/name", "ina219");
    files.Set(std::string("/sys/class/hwmon/") + device + "/power1_input", "1000");
  }
  EXPECT_THAT(Names(DiscoverEnergySources(files)), ElementsAre("hwmon:ina219/power1", "hwmon:ina219/power1 #2"));
}

TEST(SysfsValueTest, OnlyOneIntegerParses) {
  EXPECT_EQ(*ParseSysfsInt(" 262143328850\n", "f"), 262143328850);
  EXPECT_EQ(*ParseSysfsInt("-412000", "f"), -412000);
  EXPECT_EQ(*ParseSysfsInt("+7", "f"), 7);
  EXPECT_EQ(*ParseSysfsInt("9223372036854775807", "f"), INT64_MAX);
  EXPECT_EQ(*ParseSysfsInt("-9223372036854775808", "f"), INT64_MIN);
  for (const char* bad :
       {"", " \n", "abc", "12abc", "1.5", "0x10", "+-5", "--5", "+", "-", "1 2", "9223372036854775808", "\xff\xfe"}) {
    absl::StatusOr<int64_t> value = ParseSysfsInt(bad, "/sys/x");
    EXPECT_EQ(value.status().code(), absl::StatusCode::kInvalidArgument) << "\"" << bad << "\"";
    EXPECT_THAT(std::string(value.status().message()), StartsWith("/sys/x: "));
  }
}

}  // namespace
}  // namespace fleetmark::engine::energy
