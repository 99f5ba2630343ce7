#include "engine/topology/host.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/topology/fixtures.h"

namespace fleetmark::engine {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

constexpr char kHybrid[] = "20em64t-hybrid-1p6c2t+2ca4co1t";
constexpr char kFourSocket[] = "16em64t-4s2c2t";
constexpr char kArm[] = "2arm-2c";

std::vector<uint32_t> Range(uint32_t first, uint32_t last) {
  std::vector<uint32_t> v;
  for (uint32_t i = first; i <= last; ++i) v.push_back(i);
  return v;
}

std::vector<uint32_t> Cpus(const v1::CoreKind& kind) { return {kind.cpus().begin(), kind.cpus().end()}; }

// Every test runs once through hwloc and once through the sysfs fallback.
class FixtureTest : public ::testing::TestWithParam<bool> {
 protected:
  v1::HostInfo Detect(const char* fixture) {
    HostOptions options;
    options.fsroot = testing::FixtureRoot(fixture);
    options.use_hwloc = GetParam();
    absl::StatusOr<v1::HostInfo> host = DetectHost(options);
    EXPECT_TRUE(host.ok()) << host.status();
    if (!host.ok()) return {};
    EXPECT_THAT(host->topology_source(), HasSubstr(GetParam() ? "(hwloc)" : "(sysfs)"));
    return *host;
  }
};

TEST_P(FixtureTest, IntelHybridHasSixSmtPerformanceAndEightEfficiencyCores) {
  v1::HostInfo host = Detect(kHybrid);
  EXPECT_EQ(host.cpu_model(), "13th Gen Intel(R) Core(TM) i7-1370P");
  EXPECT_EQ(host.logical_cpus(), 20u);
  EXPECT_EQ(host.physical_cores(), 14u);
  EXPECT_TRUE(host.smt());
  EXPECT_EQ(host.packages(), 1u);
  ASSERT_EQ(host.core_classes_size(), 2);

  const v1::CoreKind& p = host.core_classes(0);
  EXPECT_EQ(p.name(), "performance");
  EXPECT_THAT(Cpus(p), ElementsAreArray(Range(0, 11)));
  EXPECT_EQ(p.cores(), 6u);
  EXPECT_EQ(p.threads_per_core(), 2u);
  EXPECT_EQ(p.max_frequency_khz(), 5000000u);

  const v1::CoreKind& e = host.core_classes(1);
  EXPECT_EQ(e.name(), "efficiency");
  EXPECT_THAT(Cpus(e), ElementsAreArray(Range(12, 19)));
  EXPECT_EQ(e.cores(), 8u);
  EXPECT_EQ(e.threads_per_core(), 1u);
  EXPECT_EQ(e.max_frequency_khz(), 3900000u);

  EXPECT_THAT(host.smt_siblings_of_cpu0(), ElementsAre(0, 1));
  ASSERT_EQ(host.cores_size(), 14);
  EXPECT_THAT(host.cores(5).cpus(), ElementsAre(10, 11));
  EXPECT_EQ(host.cores(5).core_class(), "performance");
  EXPECT_THAT(host.cores(6).cpus(), ElementsAre(12));
  EXPECT_EQ(host.cores(6).core_class(), "efficiency");
  // Two favoured P-cores (CPUs 4-5, 8-9) turbo to 5.2 GHz and keep it per core.
  EXPECT_EQ(host.cores(2).max_frequency_khz(), 5200000u);

  EXPECT_EQ(host.governor(), "powersave");
  EXPECT_FALSE(host.clocks_locked());  // scaling_min 400 MHz < scaling_max
  EXPECT_EQ(host.device_model(), "HP EliteBook 840 14 inch G10 Notebook PC");
  EXPECT_EQ(host.kernel(), "6.1.0-13-amd64");
  EXPECT_EQ(host.arch(), "x86_64");
  EXPECT_GT(host.memory_bytes(), 30ull << 30);
  // Each cluster of 4 E-cores shares one L2.
  bool found_e_l2 = false;
  for (const v1::CacheInfo& cache : host.caches()) {
    if (cache.level() == 2 && std::vector<uint32_t>(cache.cpus().begin(), cache.cpus().end()) == Range(12, 15)) {
      found_e_l2 = true;
      EXPECT_EQ(cache.size_bytes(), 2048u * 1024);
    }
  }
  EXPECT_TRUE(found_e_l2);
  if (GetParam()) {
    // hwloc's own kinds: E-cores (efficiency 0) then P-cores.
    ASSERT_EQ(host.core_kinds_size(), 2);
    EXPECT_THAT(Cpus(host.core_kinds(0)), ElementsAreArray(Range(12, 19)));
    EXPECT_EQ(host.core_kinds(0).efficiency(), 0);
    EXPECT_THAT(Cpus(host.core_kinds(1)), ElementsAreArray(Range(0, 11)));
    EXPECT_EQ(host.hwloc_version(), "2.9.0");
  } else {
    EXPECT_EQ(host.core_kinds_size(), 0);
  }
}

TEST_P(FixtureTest, FourSocketHostHasSmtAndOneClass) {
  v1::HostInfo host = Detect(kFourSocket);
  EXPECT_EQ(host.logical_cpus(), 16u);
  EXPECT_EQ(host.physical_cores(), 8u);
  EXPECT_EQ(host.packages(), 4u);
  EXPECT_TRUE(host.smt());
  ASSERT_EQ(host.core_classes_size(), 1);
  EXPECT_EQ(host.core_classes(0).name(), "performance");
  EXPECT_THAT(Cpus(host.core_classes(0)), ElementsAreArray(Range(0, 15)));
  EXPECT_EQ(host.core_classes(0).threads_per_core(), 2u);
  EXPECT_THAT(host.smt_siblings_of_cpu0(), ElementsAre(0, 8));  // siblings are not adjacent
  std::set<uint32_t> packages;
  for (const v1::CoreInfo& core : host.cores()) {
    EXPECT_EQ(core.cpus_size(), 2);
    packages.insert(core.package());
  }
  EXPECT_EQ(packages.size(), 4u);
  EXPECT_EQ(host.cpu_model(), "Intel(R) Xeon(TM) CPU 2.60GHz");
  EXPECT_EQ(host.governor(), "");
  EXPECT_FALSE(host.notes().empty());  // no cpufreq in this recording
}

TEST_P(FixtureTest, ArmBoardHasTwoCortexA9Cores) {
  v1::HostInfo host = Detect(kArm);
  EXPECT_EQ(host.logical_cpus(), 2u);
  EXPECT_EQ(host.physical_cores(), 2u);
  EXPECT_FALSE(host.smt());
  ASSERT_EQ(host.core_classes_size(), 1);
  EXPECT_EQ(host.core_classes(0).name(), "performance");
  EXPECT_THAT(Cpus(host.core_classes(0)), ElementsAre(0, 1));
  EXPECT_EQ(host.core_classes(0).microarchitecture(), "Cortex-A9");
  EXPECT_EQ(host.core_classes(0).max_frequency_khz(), 800000u);
  EXPECT_EQ(host.cpu_model(), "Cortex-A9");
  EXPECT_EQ(host.arch(), "arm");
  EXPECT_EQ(host.governor(), "ondemand");
  EXPECT_EQ(host.device_model(), "ST-Ericsson MOP500 platform");
}

INSTANTIATE_TEST_SUITE_P(HwlocAndSysfs, FixtureTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "hwloc" : "sysfs"; });

TEST(DetectHostTest, LiveMachineIsConsistent) {
  absl::StatusOr<v1::HostInfo> host = DetectHost();
  ASSERT_TRUE(host.ok()) << host.status();
  EXPECT_EQ(host->topology_source(), "hwloc");
  EXPECT_GE(host->logical_cpus(), 1u);
  EXPECT_LE(host->logical_cpus(), static_cast<uint32_t>(sysconf(_SC_NPROCESSORS_ONLN)));
  EXPECT_GE(host->physical_cores(), 1u);
  EXPECT_LE(host->physical_cores(), host->logical_cpus());
  EXPECT_FALSE(host->arch().empty());
  EXPECT_FALSE(host->kernel().empty());
  EXPECT_GT(host->memory_bytes(), 0u);
  ASSERT_GE(host->core_classes_size(), 1);
  EXPECT_EQ(host->core_classes(0).name(), "performance");
  // Every CPU is in exactly one class and one core.
  std::multiset<uint32_t> in_classes, in_cores;
  for (const auto& c : host->core_classes()) in_classes.insert(c.cpus().begin(), c.cpus().end());
  for (const auto& c : host->cores()) in_cores.insert(c.cpus().begin(), c.cpus().end());
  // Logical CPUs are what this process may use (affinity, CPU quota): at most those.
  EXPECT_GE(in_classes.size(), host->logical_cpus());
  EXPECT_EQ(in_classes, in_cores);
  EXPECT_EQ(std::set<uint32_t>(in_cores.begin(), in_cores.end()).size(), in_cores.size());
  // The sysfs fallback agrees on the structure.
  absl::StatusOr<v1::HostInfo> sysfs = DetectHost({.fsroot = "", .use_hwloc = false});
  ASSERT_TRUE(sysfs.ok()) << sysfs.status();
  EXPECT_EQ(sysfs->logical_cpus(), host->logical_cpus());
  EXPECT_EQ(sysfs->physical_cores(), host->physical_cores());
  EXPECT_EQ(sysfs->smt(), host->smt());
}

TEST(DetectHostTest, ConcurrentLiveAndRecordedDetectionsDoNotMix) {
  const std::string root = testing::FixtureRoot(kHybrid);
  absl::StatusOr<v1::HostInfo> reference = DetectHost();
  ASSERT_TRUE(reference.ok()) << reference.status();
  std::thread recorded([&] {
    for (int i = 0; i < 5; ++i) {
      absl::StatusOr<v1::HostInfo> host = DetectHost({.fsroot = root});
      ASSERT_TRUE(host.ok()) << host.status();
      EXPECT_EQ(host->logical_cpus(), 20u);
    }
  });
  for (int i = 0; i < 5; ++i) {
    absl::StatusOr<v1::HostInfo> host = DetectHost();
    ASSERT_TRUE(host.ok()) << host.status();
    EXPECT_EQ(host->logical_cpus(), reference->logical_cpus());
    EXPECT_EQ(host->topology_source(), "hwloc");
  }
  recorded.join();
}

TEST(DetectHostTest, BadFsrootIsAnError) {
  EXPECT_EQ(DetectHost({.fsroot = "/nonexistent/fleetmark-fsroot"}).status().code(),
            absl::StatusCode::kInvalidArgument);
  const std::filesystem::path empty =
      std::filesystem::temp_directory_path() / ("fleetmark-empty-" + std::to_string(getpid()));
  std::filesystem::create_directories(empty);
  absl::StatusOr<v1::HostInfo> host = DetectHost({.fsroot = empty.string()});
  EXPECT_EQ(host.status().code(), absl::StatusCode::kNotFound) << host.status();
  std::filesystem::remove_all(empty);
}

// A tree with only proc/cpuinfo: hwloc's Linux backend gives up and its fallback would
// count the live machine's CPUs; the host must come from the tree alone, flagged.
TEST(DetectHostTest, IncompleteFsrootNeverMixesInLiveData) {
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() / ("fleetmark-partial-" + std::to_string(getpid()));
  std::filesystem::create_directories(root / "proc");
  {
    std::ofstream cpuinfo(root / "proc" / "cpuinfo");
    for (int i = 0; i < 37; ++i) cpuinfo << "processor\t: " << i << "\nmodel name\t: Fake\n\n";
  }
  absl::StatusOr<v1::HostInfo> host = DetectHost({.fsroot = root.string()});
  ASSERT_TRUE(host.ok()) << host.status();
  EXPECT_EQ(host->logical_cpus(), 37u);  // the tree's, not this machine's
  EXPECT_THAT(host->topology_source(), ::testing::HasSubstr("(sysfs)"));
  bool flagged = false;
  for (const std::string& note : host->notes()) {
    flagged = flagged || note.find("hwloc could not read the recorded tree") != std::string::npos;
  }
  EXPECT_TRUE(flagged);
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace fleetmark::engine
