// Emulation detection (engine/topology/emulation.h) on /proc trees written by the test:
// qemu-user on an x86 host, native ARM, armhf on an arm64 kernel, an x86 binary on an
// ARM host, binfmt_misc alone; and DetectHost on the live machine and on a tree.
#include "engine/topology/emulation.h"

#include "engine/topology/host.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/topology/fixtures.h"

namespace fleetmark::engine::topology_internal {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// What /proc/cpuinfo shows inside qemu-aarch64 on this kind of machine: the host's.
constexpr char kIntelCpuinfo[] =
    "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 85\n"
    "model name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\nflags\t\t: fpu vme de pse lm sse2\n\n"
    "processor\t: 1\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\n"
    "flags\t\t: fpu vme de pse lm sse2\n";
constexpr char kArmCpuinfo[] =
    "processor\t: 0\nBogoMIPS\t: 38.40\nFeatures\t: fp asimd evtstrm aes crc32\n"
    "CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x1\nCPU part\t: 0xd05\n"
    "CPU revision\t: 0\n";
constexpr char kQemuAarch64Binfmt[] =
    "enabled\ninterpreter /usr/libexec/qemu-binfmt/aarch64-binfmt-P\nflags: POCF\n"
    "offset 0\nmagic 7f454c460201010000000000000000000200b700\n";

struct Tree {
  std::string root;
  SysfsReader reader{""};
  CpuInfo cpuinfo;
};

Tree Write(const std::string& name, const std::string& cpuinfo, const std::map<std::string, std::string>& binfmt = {}) {
  Tree tree;
  tree.root = engine::testing::ScratchRoot(name);
  if (!cpuinfo.empty()) engine::testing::WriteTreeFile(tree.root, "/proc/cpuinfo", cpuinfo);
  for (const auto& [handler, text] : binfmt) {
    engine::testing::WriteTreeFile(tree.root, "/proc/sys/fs/binfmt_misc/" + handler, text);
  }
  engine::testing::WriteTreeFile(tree.root, "/proc/sys/fs/binfmt_misc/status", "enabled\n");
  tree.reader = SysfsReader(tree.root);
  tree.cpuinfo = ParseCpuInfo(tree.reader.Read("/proc/cpuinfo").value_or(""));
  return tree;
}

TEST(EmulationTest, Aarch64BinaryOnIntelCpuinfoIsEmulatedAndSaysWhatItSaw) {
  Tree tree = Write("qemu-on-intel", kIntelCpuinfo, {{"qemu-aarch64", kQemuAarch64Binfmt}});
  EmulationVerdict verdict = DetectEmulation(tree.reader, tree.cpuinfo, "aarch64", "aarch64");
  EXPECT_TRUE(verdict.emulated);
  EXPECT_THAT(verdict.evidence, HasSubstr("binary aarch64, uname aarch64"));
  EXPECT_THAT(verdict.evidence, HasSubstr("/proc/cpuinfo x86 (vendor_id GenuineIntel)"));
  EXPECT_THAT(verdict.evidence, HasSubstr("binfmt_misc qemu-aarch64 enabled (interpreter "
                                          "/usr/libexec/qemu-binfmt/aarch64-binfmt-P)"));
}

TEST(EmulationTest, Aarch64BinaryOnArmCpuinfoIsNative) {
  Tree tree = Write("native-arm64", kArmCpuinfo);
  EmulationVerdict verdict = DetectEmulation(tree.reader, tree.cpuinfo, "aarch64", "aarch64");
  EXPECT_FALSE(verdict.emulated) << verdict.evidence;
  EXPECT_THAT(verdict.evidence, HasSubstr("/proc/cpuinfo arm (CPU implementer 0x41)"));
}

TEST(EmulationTest, ArmhfBinaryOnArm64KernelIsNative) {
  // A 32-bit binary on a 64-bit kernel of its own family runs natively (compat mode).
  Tree tree = Write("armhf-on-arm64", kArmCpuinfo);
  EXPECT_FALSE(DetectEmulation(tree.reader, tree.cpuinfo, "arm", "armv8l").emulated);
  EXPECT_FALSE(DetectEmulation(tree.reader, tree.cpuinfo, "arm", "aarch64").emulated);
}

TEST(EmulationTest, X86BinaryOnArmHostIsEmulated) {
  // box64 / FEX / Rosetta-style translators fake uname as x86_64 too.
  Tree tree = Write("x86-on-arm", kArmCpuinfo);
  EXPECT_TRUE(DetectEmulation(tree.reader, tree.cpuinfo, "x86_64", "x86_64").emulated);
}

TEST(EmulationTest, UnameOfAnotherFamilyIsEmulatedEvenWithoutCpuinfo) {
  Tree tree = Write("uname-only", "");
  EmulationVerdict verdict = DetectEmulation(tree.reader, tree.cpuinfo, "aarch64", "x86_64");
  EXPECT_TRUE(verdict.emulated);
  EXPECT_THAT(verdict.evidence, HasSubstr("/proc/cpuinfo names no CPU architecture"));
}

TEST(EmulationTest, EnabledQemuHandlerCountsOnlyWhenCpuinfoSaysNothing) {
  Tree silent = Write("binfmt-only", "", {{"qemu-aarch64", kQemuAarch64Binfmt}});
  EXPECT_TRUE(DetectEmulation(silent.reader, silent.cpuinfo, "aarch64", "aarch64").emulated);
  // A disabled handler is no evidence.
  Tree disabled = Write("binfmt-disabled", "", {{"qemu-aarch64", "disabled\ninterpreter /usr/bin/qemu-aarch64\n"}});
  EmulationVerdict verdict = DetectEmulation(disabled.reader, disabled.cpuinfo, "aarch64", "aarch64");
  EXPECT_FALSE(verdict.emulated);
  EXPECT_THAT(verdict.evidence, Not(HasSubstr("binfmt_misc")));
  // Another architecture's handler says nothing about this binary.
  Tree other = Write("binfmt-other", "", {{"qemu-arm", kQemuAarch64Binfmt}});
  EXPECT_FALSE(DetectEmulation(other.reader, other.cpuinfo, "aarch64", "aarch64").emulated);
}

TEST(EmulationTest, ArchFamilies) {
  EXPECT_EQ(ArchFamily("x86_64"), "x86");
  EXPECT_EQ(ArchFamily("i686"), "x86");
  EXPECT_EQ(ArchFamily("aarch64"), "arm");
  EXPECT_EQ(ArchFamily("armv7l"), "arm");
  EXPECT_EQ(ArchFamily("arm64"), "arm");
  EXPECT_EQ(ArchFamily("riscv64"), "riscv");
  EXPECT_EQ(ArchFamily(""), "");
}

TEST(EmulationTest, LiveMachineIsNotEmulatedAndRecordsWhatItSaw) {
  // The test binary runs natively here (ctest runs it directly, not under qemu).
  absl::StatusOr<v1::HostInfo> host = DetectHost({});
  ASSERT_TRUE(host.ok()) << host.status();
  EXPECT_FALSE(host->emulated()) << host->emulation_evidence();
  EXPECT_THAT(host->emulation_evidence(), HasSubstr(absl::StrCat("binary ", BinaryArch(), ", uname ", host->arch())));
}

TEST(EmulationTest, RecordedTreeIsJudgedOnlyAgainstAGivenRunningArch) {
  Tree tree = Write("recorded-intel", kIntelCpuinfo, {{"qemu-aarch64", kQemuAarch64Binfmt}});
  HostOptions options;
  options.fsroot = tree.root;
  options.use_hwloc = false;
  absl::StatusOr<v1::HostInfo> unjudged = DetectHost(options);
  ASSERT_TRUE(unjudged.ok()) << unjudged.status();
  EXPECT_FALSE(unjudged->emulated());
  EXPECT_EQ(unjudged->emulation_evidence(), "");

  options.running_arch = "aarch64";
  absl::StatusOr<v1::HostInfo> judged = DetectHost(options);
  ASSERT_TRUE(judged.ok()) << judged.status();
  EXPECT_TRUE(judged->emulated());
  EXPECT_THAT(judged->emulation_evidence(), HasSubstr("binary aarch64"));
}

}  // namespace
}  // namespace fleetmark::engine::topology_internal
