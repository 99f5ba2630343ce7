// Core classes by the cores' identity when cpufreq and cpu_capacity are both missing
// (phones, boards, SELinux): recorded trees stripped of them, with the parts swapped
// between CPUs -- the labels must follow the parts, never the CPU order.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/topology/cpuinfo.h"
#include "engine/topology/host.h"
#include "engine/topology/host_text.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/topology/fixtures.h"

namespace fleetmark::engine {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using testing::RemoveTreePath;
using testing::WriteTreeFile;

// An arm64 /proc/cpuinfo with one block per CPU: parts[i] = "implementer:part".
std::string ArmCpuInfo(const std::vector<std::string>& parts) {
  std::string text;
  for (std::size_t cpu = 0; cpu < parts.size(); ++cpu) {
    const std::size_t colon = parts[cpu].find(':');
    absl::StrAppend(&text, "processor\t: ", cpu, "\nBogoMIPS\t: 38.40\n",
                    "Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32\n",
                    "CPU implementer\t: ", parts[cpu].substr(0, colon),
                    "\nCPU architecture: 8\nCPU variant\t: 0x1\nCPU part\t: ", parts[cpu].substr(colon + 1),
                    "\nCPU revision\t: 0\n\n");
  }
  return text;
}

// The CPUs of the class named `name`, empty if there is none.
std::vector<uint32_t> ClassCpus(const v1::HostInfo& host, const std::string& name) {
  for (const v1::CoreKind& kind : host.core_classes()) {
    if (kind.name() == name) return {kind.cpus().begin(), kind.cpus().end()};
  }
  return {};
}

v1::HostInfo Detect(const std::string& root, bool hwloc) {
  absl::StatusOr<v1::HostInfo> host = DetectHost({.fsroot = root, .use_hwloc = hwloc});
  EXPECT_TRUE(host.ok()) << host.status();
  return host.ok() ? *host : v1::HostInfo();
}

class RecordedBoardTest : public ::testing::TestWithParam<bool> {};

// The recorded 2-CPU ARM board without cpufreq (and it has no cpu_capacity), its
// cpuinfo giving the two CPUs different parts, one way and then the other.
TEST_P(RecordedBoardTest, BigLittleLabelsFollowTheParts) {
  const std::string root = testing::CopyFixture("2arm-2c", GetParam() ? "board-hwloc" : "board-sysfs");
  ASSERT_FALSE(root.empty());
  RemoveTreePath(root, "/sys/devices/system/cpu/cpufreq");
  RemoveTreePath(root, "/sys/devices/system/cpu/cpu0/cpufreq");
  RemoveTreePath(root, "/sys/devices/system/cpu/cpu1/cpufreq");

  WriteTreeFile(root, "/proc/cpuinfo", ArmCpuInfo({"0x41:0xd05", "0x41:0xd0b"}));
  v1::HostInfo host = Detect(root, GetParam());
  ASSERT_EQ(host.core_classes_size(), 2) << FormatHostText(host);
  EXPECT_THAT(ClassCpus(host, "performance"), ElementsAre(1)) << FormatHostText(host);
  EXPECT_THAT(ClassCpus(host, "efficiency"), ElementsAre(0));
  EXPECT_EQ(host.core_classes(0).microarchitecture(), "Cortex-A76");
  EXPECT_EQ(host.cores(0).core_class(), "efficiency");
  EXPECT_EQ(host.cores(1).core_class(), "performance");
  EXPECT_EQ(host.core_classes(0).max_frequency_khz(), 0u);  // nothing invented

  WriteTreeFile(root, "/proc/cpuinfo", ArmCpuInfo({"0x41:0xd0b", "0x41:0xd05"}));
  host = Detect(root, GetParam());
  ASSERT_EQ(host.core_classes_size(), 2);
  EXPECT_THAT(ClassCpus(host, "performance"), ElementsAre(0)) << FormatHostText(host);
  EXPECT_THAT(ClassCpus(host, "efficiency"), ElementsAre(1));
  EXPECT_EQ(host.cpu_model(), "1x Cortex-A76 + 1x Cortex-A55");
}

INSTANTIATE_TEST_SUITE_P(HwlocAndSysfs, RecordedBoardTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "hwloc" : "sysfs"; });

// A phone-like tree: per CPU its topology and caches, no cpufreq, no cpu_capacity.
// `parts` per CPU; `l2_kib` per CPU (private L2), every CPU sharing one 2 MiB L3.
std::string WritePhone(const std::string& name, const std::vector<std::string>& parts, const std::vector<int>& l2_kib) {
  const std::string root = testing::ScratchRoot(name);
  const int n = static_cast<int>(parts.size());
  WriteTreeFile(root, "/proc/cpuinfo", ArmCpuInfo(parts));
  WriteTreeFile(root, "/sys/devices/system/cpu/online", absl::StrCat("0-", n - 1));
  for (int cpu = 0; cpu < n; ++cpu) {
    const std::string dir = absl::StrCat("/sys/devices/system/cpu/cpu", cpu);
    WriteTreeFile(root, dir + "/topology/thread_siblings_list", absl::StrCat(cpu));
    WriteTreeFile(root, dir + "/topology/physical_package_id", "0");
    const std::vector<std::tuple<int, std::string, std::string, std::string>> caches = {
        {1, "Data", l2_kib[cpu] >= 512 ? "64K" : "32K", absl::StrCat(cpu)},
        {2, "Unified", absl::StrCat(l2_kib[cpu], "K"), absl::StrCat(cpu)},
        {3, "Unified", "2048K", absl::StrCat("0-", n - 1)}};
    for (std::size_t i = 0; i < caches.size(); ++i) {
      const auto& [level, type, size, shared] = caches[i];
      const std::string index = absl::StrCat(dir, "/cache/index", i);
      WriteTreeFile(root, index + "/level", absl::StrCat(level));
      WriteTreeFile(root, index + "/type", type);
      WriteTreeFile(root, index + "/size", size);
      WriteTreeFile(root, index + "/shared_cpu_list", shared);
    }
  }
  return root;
}

TEST(CoreIdentityTest, ThreeClustersByTheTableOfKnownCores) {
  // Snapdragon 888-like: 4x A55, 3x A78, 1x X1 -- then the same with the order reversed.
  const std::string x1 = "0x41:0xd44", a78 = "0x41:0xd41", a55 = "0x41:0xd05";
  v1::HostInfo host = Detect(
      WritePhone("phone", {a55, a55, a55, a55, a78, a78, a78, x1}, {128, 128, 128, 128, 512, 512, 512, 1024}), false);
  ASSERT_EQ(host.core_classes_size(), 3) << FormatHostText(host);
  EXPECT_THAT(ClassCpus(host, "performance"), ElementsAre(7));
  EXPECT_THAT(ClassCpus(host, "mid"), ElementsAre(4, 5, 6));
  EXPECT_THAT(ClassCpus(host, "efficiency"), ElementsAre(0, 1, 2, 3));

  host = Detect(
      WritePhone("phone-swapped", {x1, a78, a78, a78, a55, a55, a55, a55}, {1024, 512, 512, 512, 128, 128, 128, 128}),
      false);
  ASSERT_EQ(host.core_classes_size(), 3) << FormatHostText(host);
  EXPECT_THAT(ClassCpus(host, "performance"), ElementsAre(0));
  EXPECT_THAT(ClassCpus(host, "mid"), ElementsAre(1, 2, 3));
  EXPECT_THAT(ClassCpus(host, "efficiency"), ElementsAre(4, 5, 6, 7));
  EXPECT_EQ(host.core_classes(2).microarchitecture(), "Cortex-A55");
}

TEST(CoreIdentityTest, UnknownPartsAreRankedByCacheSize) {
  // Two parts in no table: the one with the larger L2 is the performance class.
  const std::string small = "0x99:0x001", big = "0x99:0x002";
  v1::HostInfo host = Detect(WritePhone("unknown", {small, small, big, big}, {128, 128, 1024, 1024}), false);
  ASSERT_EQ(host.core_classes_size(), 2) << FormatHostText(host);
  EXPECT_THAT(ClassCpus(host, "performance"), ElementsAre(2, 3));
  EXPECT_THAT(ClassCpus(host, "efficiency"), ElementsAre(0, 1));
  // Named by their ids, not "(unknown)".
  EXPECT_EQ(host.cpu_model(), "2x ARM implementer 0x99 part 0x001 + 2x ARM implementer 0x99 part 0x002");

  host = Detect(WritePhone("unknown-swapped", {big, big, small, small}, {1024, 1024, 128, 128}), false);
  ASSERT_EQ(host.core_classes_size(), 2);
  EXPECT_THAT(ClassCpus(host, "performance"), ElementsAre(0, 1));
  EXPECT_THAT(ClassCpus(host, "efficiency"), ElementsAre(2, 3));
}

// The recorded Intel hybrid laptop without cpufreq, its PMU directories saying which
// CPUs are P-cores (IntelCore) and E-cores (IntelAtom) -- swapped on purpose.
TEST(CoreIdentityTest, IntelHybridCoreTypesWithoutFrequencies) {
  const std::string root = testing::CopyFixture("20em64t-hybrid-1p6c2t+2ca4co1t", "hybrid-types");
  ASSERT_FALSE(root.empty());
  RemoveTreePath(root, "/sys/devices/system/cpu/cpufreq");
  for (int cpu = 0; cpu < 20; ++cpu) {
    RemoveTreePath(root, absl::StrCat("/sys/devices/system/cpu/cpu", cpu, "/cpufreq"));
    RemoveTreePath(root, absl::StrCat("/sys/devices/system/cpu/cpu", cpu, "/acpi_cppc"));
  }
  WriteTreeFile(root, "/sys/devices/cpu_core/cpus", "12-19");
  WriteTreeFile(root, "/sys/devices/cpu_atom/cpus", "0-11");
  v1::HostInfo host = Detect(root, false);
  ASSERT_EQ(host.core_classes_size(), 2) << FormatHostText(host);
  EXPECT_THAT(ClassCpus(host, "performance"), ElementsAreArray({12, 13, 14, 15, 16, 17, 18, 19}));
  EXPECT_EQ(host.core_classes(0).microarchitecture(), "IntelCore");
  EXPECT_EQ(host.core_classes(1).microarchitecture(), "IntelAtom");
}

TEST(CoreIdentityTest, WellKnownServerAndPhoneCoresHaveNames) {
  using topology_internal::ArmCoreName;
  EXPECT_EQ(ArmCoreName("0x41", "0xd0c"), "Neoverse-N1");  // Graviton2, Ampere Altra
  EXPECT_EQ(ArmCoreName("0x41", "0xd40"), "Neoverse-V1");  // Graviton3
  EXPECT_EQ(ArmCoreName("0x41", "0xd4f"), "Neoverse-V2");  // Graviton4, Grace
  EXPECT_EQ(ArmCoreName("0x41", "0xd49"), "Neoverse-N2");
  EXPECT_EQ(ArmCoreName("0xc0", "0xac3"), "Ampere-1");  // AmpereOne
  EXPECT_EQ(ArmCoreName("0x46", "0x001"), "A64FX");
  EXPECT_EQ(ArmCoreName("0x48", "0xd01"), "TaiShan-v110");  // Kunpeng 920
  EXPECT_EQ(ArmCoreName("0x43", "0x0af"), "ThunderX2-99xx");
  EXPECT_EQ(ArmCoreName("0x4e", "0x004"), "Carmel");  // Jetson Xavier
  EXPECT_EQ(ArmCoreName("0x61", "0x023"), "Apple-Firestorm");
  EXPECT_EQ(ArmCoreName("0x51", "0x001"), "Oryon");
  EXPECT_EQ(ArmCoreName("0x41", "0xd82"), "Cortex-X4");
  EXPECT_EQ(ArmCoreName("0x41", "0xd81"), "Cortex-A720");
  EXPECT_EQ(ArmCoreName("0x41", "0xd80"), "Cortex-A520");

  using topology_internal::CoreRank;
  EXPECT_GT(CoreRank("Cortex-X4"), CoreRank("Cortex-X1"));
  EXPECT_GT(CoreRank("Cortex-X1"), CoreRank("Cortex-A78"));
  EXPECT_GT(CoreRank("Cortex-A715"), CoreRank("Cortex-A710"));
  EXPECT_GT(CoreRank("Cortex-A710"), CoreRank("Cortex-A510"));
  EXPECT_GT(CoreRank("Cortex-A15"), CoreRank("Cortex-A7"));
  EXPECT_GT(CoreRank("Cortex-A17"), CoreRank("Cortex-A7"));
  EXPECT_GT(CoreRank("Kryo-4XX-Gold"), CoreRank("Kryo-4XX-Silver"));
  EXPECT_GT(CoreRank("Apple-Firestorm"), CoreRank("Apple-Icestorm"));
  EXPECT_GT(CoreRank("IntelCore"), CoreRank("IntelAtom"));
  EXPECT_GT(CoreRank("Cortex-A520"), 0);
  EXPECT_EQ(CoreRank("ARM implementer 0x99 part 0x001"), 0);
  EXPECT_EQ(CoreRank(""), 0);
}

}  // namespace
}  // namespace fleetmark::engine
