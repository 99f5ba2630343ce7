// Host detection on an Android-like root: the recorded 2arm-2c board (fixtures/) plus a
// stand-in system/bin/getprop, build.prop files, sys/class/power_supply and thermal
// zones, some of them unreadable. Root reads anything, so a denied file is a directory
// where the file belongs (read fails like EACCES), plus a mode-000 file whose outcome
// depends on who runs the test.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "engine/topology/device_info.h"
#include "engine/topology/host.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/topology/fixtures.h"

namespace fleetmark::engine {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;

constexpr char kGetpropScript[] =
    "#!/bin/sh\n"
    "# stand-in for Android's getprop: every property, as the real one prints them\n"
    "cat <<'END'\n"
    "[ro.build.fingerprint]: [google/panther/panther:14/UQ1A.240205.004/11269751:user/release-keys]\n"
    "[ro.build.version.release]: [14]\n"
    "[ro.build.version.sdk]: [34]\n"
    "[ro.product.board]: [panther]\n"
    "[ro.product.cpu.abi]: [arm64-v8a]\n"
    "[ro.product.manufacturer]: [Google]\n"
    "[ro.product.model]: [Pixel 7]\n"
    "[ro.soc.manufacturer]: [Google]\n"
    "[ro.soc.model]: [GS201]\n"
    "[persist.sys.timezone]: [Europe/Zurich]\n"
    "END\n";

// The 2arm-2c recorded board copied to a scratch root, plus `extra` files.
std::string AndroidRoot(const std::string& name) {
  const std::string board = testing::FixtureRoot("2arm-2c");
  const std::string root = testing::ScratchRoot(name);
  std::filesystem::copy(board, root,
                        std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
  // Battery: level and status readable, temperature denied.
  testing::WriteTreeFile(root, "/sys/class/power_supply/battery/type", "Battery\n");
  testing::WriteTreeFile(root, "/sys/class/power_supply/battery/capacity", "87\n");
  testing::WriteTreeFile(root, "/sys/class/power_supply/battery/status", "Charging\n");
  std::filesystem::create_directories(root + "/sys/class/power_supply/battery/temp");
  testing::WriteTreeFile(root, "/sys/class/power_supply/usb/type", "USB\n");
  // Thermal zones: one readable, one with a denied temperature, one with a mode-000 type.
  testing::WriteTreeFile(root, "/sys/class/thermal/thermal_zone0/type", "cpu-0-0\n");
  testing::WriteTreeFile(root, "/sys/class/thermal/thermal_zone0/temp", "45500\n");
  testing::WriteTreeFile(root, "/sys/class/thermal/thermal_zone1/type", "battery\n");
  std::filesystem::create_directories(root + "/sys/class/thermal/thermal_zone1/temp");
  testing::WriteTreeFile(root, "/sys/class/thermal/thermal_zone2/type", "skin-therm\n");
  testing::WriteTreeFile(root, "/sys/class/thermal/thermal_zone2/temp", "30000\n");
  chmod((root + "/sys/class/thermal/thermal_zone2/type").c_str(), 0);
  return root;
}

v1::HostInfo Detect(const std::string& root) {
  HostOptions options;
  options.fsroot = root;
  options.use_hwloc = false;
  options.running_arch = "armv7l";
  absl::StatusOr<v1::HostInfo> host = DetectHost(options);
  EXPECT_TRUE(host.ok()) << host.status();
  return host.ok() ? *host : v1::HostInfo();
}

TEST(AndroidHostTest, GetpropGivesTheDeviceAndBuild) {
  const std::string root = AndroidRoot("getprop");
  testing::WriteTreeFile(root, "/system/bin/getprop", kGetpropScript);
  chmod((root + "/system/bin/getprop").c_str(), 0755);
  // A build.prop that disagrees: getprop wins when it answers.
  testing::WriteTreeFile(root, "/system/build.prop", "ro.product.model=Wrong\n");
  v1::HostInfo host = Detect(root);
  ASSERT_TRUE(host.has_android());
  const v1::AndroidInfo& a = host.android();
  EXPECT_EQ(a.source(), "getprop");
  EXPECT_EQ(a.manufacturer(), "Google");
  EXPECT_EQ(a.model(), "Pixel 7");
  EXPECT_EQ(a.board(), "panther");
  EXPECT_EQ(a.soc(), "Google GS201");
  EXPECT_EQ(a.release(), "14");
  EXPECT_EQ(a.api_level(), 34u);
  EXPECT_EQ(a.fingerprint(), "google/panther/panther:14/UQ1A.240205.004/11269751:user/release-keys");
  EXPECT_EQ(a.abi(), "arm64-v8a");
  EXPECT_EQ(host.os(), "Android 14");
  EXPECT_EQ(host.device_model(), "Google Pixel 7");
  EXPECT_EQ(host.soc(), "Google GS201");
  EXPECT_FALSE(host.emulated()) << host.emulation_evidence();
}

TEST(AndroidHostTest, BuildPropFilesWhenThereIsNoGetprop) {
  const std::string root = AndroidRoot("buildprop");
  testing::WriteTreeFile(root, "/system/build.prop",
                         "# begin build properties\nimport /oem/oem.prop\n"
                         "ro.build.version.release=13\nro.build.version.sdk=33\n"
                         "ro.product.manufacturer=samsung\nro.product.model=SM-A536B\n"
                         "ro.build.fingerprint=samsung/a53xnsxx/a53x:13/TP1A/A536BXXU4:user/release-keys\n");
  testing::WriteTreeFile(root, "/vendor/build.prop",
                         "ro.board.platform=s5e8825\nro.product.cpu.abi=arm64-v8a\n"
                         "ro.product.model=vendor-model-loses\n");
  v1::HostInfo host = Detect(root);
  ASSERT_TRUE(host.has_android());
  const v1::AndroidInfo& a = host.android();
  EXPECT_EQ(a.source(), "build.prop");
  EXPECT_EQ(a.model(), "SM-A536B");  // /system/build.prop comes first
  EXPECT_EQ(a.manufacturer(), "samsung");
  EXPECT_EQ(a.board(), "s5e8825");
  EXPECT_EQ(a.soc(), "s5e8825");
  EXPECT_EQ(a.api_level(), 33u);
  EXPECT_EQ(a.abi(), "arm64-v8a");
  EXPECT_EQ(host.os(), "Android 13");
}

TEST(AndroidHostTest, AFailingGetpropAndDeniedFilesAreUnknownNeverAnError) {
  const std::string root = AndroidRoot("denied");
  testing::WriteTreeFile(root, "/system/bin/getprop", "#!/bin/sh\nexit 1\n");
  chmod((root + "/system/bin/getprop").c_str(), 0755);
  // build.prop denied (a directory where the file belongs), vendor's readable.
  std::filesystem::create_directories(root + "/system/build.prop");
  testing::WriteTreeFile(root, "/vendor/build.prop", "ro.product.model=Pixel 7\n");
  v1::HostInfo host = Detect(root);
  ASSERT_TRUE(host.has_android());
  EXPECT_EQ(host.android().source(), "build.prop");
  EXPECT_EQ(host.android().model(), "Pixel 7");
  EXPECT_EQ(host.android().release(), "unknown");
  EXPECT_EQ(host.android().api_level(), 0u);
  EXPECT_EQ(host.android().fingerprint(), "unknown");
  EXPECT_EQ(host.os(), "Android");
  EXPECT_THAT(host.notes(), Contains(HasSubstr("android (build.prop): unknown manufacturer")));
}

TEST(AndroidHostTest, BatteryAndThermalZonesByType) {
  const std::string root = AndroidRoot("power");
  testing::WriteTreeFile(root, "/system/build.prop", "ro.product.model=X\n");
  v1::HostInfo host = Detect(root);
  ASSERT_EQ(host.batteries_size(), 1);  // the USB supply is not a battery
  const v1::BatteryInfo& battery = host.batteries(0);
  EXPECT_EQ(battery.name(), "battery");
  EXPECT_EQ(battery.level_percent(), 87);
  EXPECT_EQ(battery.status(), "Charging");
  EXPECT_TRUE(battery.charging());
  EXPECT_FALSE(battery.temperature_known());  // denied
  ASSERT_EQ(host.thermal_zones_size(), 3);
  EXPECT_EQ(host.thermal_zones(0).type(), "cpu-0-0");
  EXPECT_TRUE(host.thermal_zones(0).temperature_known());
  EXPECT_DOUBLE_EQ(host.thermal_zones(0).temperature_c(), 45.5);
  EXPECT_EQ(host.thermal_zones(1).type(), "battery");
  EXPECT_FALSE(host.thermal_zones(1).temperature_known());
  // Mode 000 stops everyone but root.
  EXPECT_EQ(host.thermal_zones(2).type(), geteuid() == 0 ? "skin-therm" : "unknown");
  EXPECT_DOUBLE_EQ(host.thermal_zones(2).temperature_c(), 30.0);
  EXPECT_THAT(host.notes(), Contains(AllOf(HasSubstr("/sys/class/power_supply/battery/temp"),
                                           HasSubstr("/sys/class/thermal/thermal_zone1/temp"))));
}

TEST(AndroidHostTest, ABoardWithoutAndroidFilesHasNoAndroidInfo) {
  HostOptions options;
  options.fsroot = testing::FixtureRoot("2arm-2c");
  options.use_hwloc = false;
  absl::StatusOr<v1::HostInfo> host = DetectHost(options);
  ASSERT_TRUE(host.ok()) << host.status();
  EXPECT_FALSE(host->has_android());
}

TEST(AndroidHostTest, PropertyParsers) {
  auto getprop =
      topology_internal::ParseGetpropOutput("[a.b]: [x y]\n[empty]: []\nnot a property line\n[broken]: [no end\n");
  EXPECT_EQ(getprop.size(), 2u);
  EXPECT_EQ(getprop["a.b"], "x y");
  EXPECT_EQ(getprop["empty"], "");
  auto build = topology_internal::ParseBuildProp("# c\n\nimport x.prop\n k = v=w \n");
  EXPECT_EQ(build.size(), 1u);
  EXPECT_EQ(build["k"], "v=w");
}

}  // namespace
}  // namespace fleetmark::engine
