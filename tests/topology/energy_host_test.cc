// HostInfo lists the energy sources (engine/topology/energy_info.h): recorded energy
// trees (tests/engine/energy/trees) under a root with a /proc/cpuinfo, through
// DetectHost and `fleetmark topology`'s text; "energy: unavailable (<why>)" without a
// sensor or under emulation; the strings fit the agent hello's rules.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "engine/common/message_text.h"
#include "engine/topology/energy_info.h"
#include "engine/topology/host.h"
#include "engine/topology/host_text.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetmark::engine {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A root holding a 4-CPU /proc/cpuinfo and, when `tree` is not empty, a copy of that
// energy tree's sys/. Removed with the object.
class EnergyRoot {
 public:
  explicit EnergyRoot(const std::string& tree)
      : root_(std::filesystem::temp_directory_path() /
              ("fleetmark-energy-" + std::to_string(getpid()) + "-" + (tree.empty() ? "none" : tree))) {
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_ / "proc");
    std::ofstream cpuinfo(root_ / "proc" / "cpuinfo");
    for (int i = 0; i < 4; ++i) cpuinfo << "processor\t: " << i << "\nmodel name\t: Fake\n\n";
    if (!tree.empty()) {
      std::filesystem::copy(std::filesystem::path(FLEETMARK_ENERGY_TREES) / tree / "sys", root_ / "sys",
                            std::filesystem::copy_options::recursive);
    }
  }
  ~EnergyRoot() { std::filesystem::remove_all(root_); }
  std::string path() const { return root_.string(); }

 private:
  std::filesystem::path root_;
};

TEST(EnergyHostTest, HostInfoListsTheRaplZonesFound) {
  EnergyRoot root("rapl_two_packages");
  absl::StatusOr<v1::HostInfo> host = DetectHost({.fsroot = root.path()});
  ASSERT_TRUE(host.ok()) << host.status();
  ASSERT_EQ(host->energy_sources_size(), 4);
  const v1::EnergySourceInfo& package = host->energy_sources(0);
  EXPECT_EQ(package.name(), "rapl:package-0");
  EXPECT_EQ(package.kind(), "rapl");
  EXPECT_TRUE(package.readable());
  EXPECT_DOUBLE_EQ(package.resolution(), 1e-6);
  EXPECT_EQ(package.resolution_unit(), "J");
  EXPECT_EQ(package.max_range_uj(), 262143328850u);
  EXPECT_EQ(package.path(), "/sys/class/powercap/intel-rapl:0/energy_uj");
  EXPECT_EQ(host->energy_sources(1).parent(), "rapl:package-0");
  EXPECT_EQ(host->energy_unavailable(), "");
  const std::string text = FormatHostText(*host);
  EXPECT_THAT(text, HasSubstr("energy       4 of 4 sources readable\n"));
  EXPECT_THAT(text, HasSubstr("energy sources (docs/energy.md)\n  rapl:package-0 "));
  EXPECT_TRUE(CheckMessageText(*host, "host", HelloTextRules()).ok());
  EXPECT_THAT(host->notes(), Not(::testing::Contains(HasSubstr("escaped or cut"))));
}

TEST(EnergyHostTest, NoSensorSaysEnergyUnavailableWithTheReason) {
  EnergyRoot root("");
  absl::StatusOr<v1::HostInfo> host = DetectHost({.fsroot = root.path()});
  ASSERT_TRUE(host.ok()) << host.status();
  EXPECT_EQ(host->energy_sources_size(), 0);
  EXPECT_THAT(host->energy_unavailable(), HasSubstr("no RAPL zone in /sys/class/powercap"));
  EXPECT_THAT(FormatHostText(*host), HasSubstr("energy       unavailable (no RAPL zone in /sys/class/powercap, no "
                                               "hwmon power or energy channel"));
}

TEST(EnergyHostTest, AChargingBatteryIsMarkedWithItsConvention) {
  EnergyRoot root("android_ua_positive_charging");
  absl::StatusOr<v1::HostInfo> host = DetectHost({.fsroot = root.path()});
  ASSERT_TRUE(host.ok()) << host.status();
  ASSERT_EQ(host->energy_sources_size(), 1);
  const v1::EnergySourceInfo& battery = host->energy_sources(0);
  EXPECT_EQ(battery.kind(), "battery");
  EXPECT_EQ(battery.resolution_unit(), "W");
  EXPECT_TRUE(battery.charging());
  EXPECT_TRUE(battery.on_external_power());
  EXPECT_THAT(battery.battery_convention(), HasSubstr("current_now 1450000 while Charging: negative = discharging"));
  EXPECT_THAT(FormatHostText(*host), HasSubstr("[charging] [on external power]"));
  EXPECT_TRUE(CheckMessageText(*host, "host", HelloTextRules()).ok());
}

TEST(EnergyHostTest, AnEmulatedBinaryListsSourcesButReportsNoEnergy) {
  EnergyRoot root("ina_board");
  v1::HostInfo host;
  topology_internal::FillEnergySources(root.path(), /*emulated=*/true, host);
  EXPECT_EQ(host.energy_sources_size(), 4);
  EXPECT_EQ(host.energy_sources(0).resolution_unit(), "W");
  EXPECT_EQ(host.energy_sources(2).resolution_unit(), "J");
  EXPECT_THAT(host.energy_unavailable(), HasSubstr("emulation"));
  v1::HostInfo live_like;
  topology_internal::FillEnergySources(root.path(), /*emulated=*/false, live_like);
  EXPECT_EQ(live_like.energy_unavailable(), "");
}

TEST(EnergyHostTest, ABadRootIsANoteNotAFailure) {
  v1::HostInfo host;
  topology_internal::FillEnergySources("/nonexistent/fleetmark-energy", false, host);
  EXPECT_EQ(host.energy_sources_size(), 0);
  EXPECT_THAT(host.energy_unavailable(), HasSubstr("is not a directory"));
  EXPECT_THAT(host.notes(), ::testing::Contains(HasSubstr("energy sources: ")));
}

}  // namespace
}  // namespace fleetmark::engine
