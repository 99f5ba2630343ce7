// CPU limits from written cgroup trees (v2 cpu.max, v1 cfs_quota_us/cfs_period_us,
// nested cgroups, a cgroup namespace) and proc/self/status's allowed CPUs, without the
// machine; then DetectHost on a recorded machine with such limits added.
#include "engine/topology/cpu_limits.h"

#include "engine/topology/host.h"
#include "engine/topology/host_text.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/topology/fixtures.h"

namespace fleetmark::engine {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::ScratchRoot;
using testing::WriteTreeFile;

constexpr char kV2Mounts[] =
    "25 30 0:22 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 "
    "rw,nsdelegate,memory_recursiveprot\n"
    "26 30 0:23 / /proc rw,nosuid - proc proc rw\n";

TEST(CpuLimitsTest, CgroupV2QuotaMemoryAndAllowedCpus) {
  const std::string root = ScratchRoot("v2");
  WriteTreeFile(root, "/proc/self/cgroup", "0::/ci.slice/job-7\n");
  WriteTreeFile(root, "/proc/self/mountinfo", kV2Mounts);
  WriteTreeFile(root, "/proc/self/status",
                "Name:\tfleetmark\nCpus_allowed:\t13\n"
                "Cpus_allowed_list:\t0-1,4\nMems_allowed:\t1\n");
  WriteTreeFile(root, "/sys/fs/cgroup/cgroup.controllers", "cpu memory\n");
  WriteTreeFile(root, "/sys/fs/cgroup/ci.slice/cpu.max", "max 100000\n");
  WriteTreeFile(root, "/sys/fs/cgroup/ci.slice/memory.max", "536870912\n");
  WriteTreeFile(root, "/sys/fs/cgroup/ci.slice/job-7/cpu.max", "150000 100000\n");
  WriteTreeFile(root, "/sys/fs/cgroup/ci.slice/job-7/memory.max", "max\n");
  const CpuLimits limits = ReadCpuLimits(root);
  EXPECT_THAT(limits.allowed, ElementsAre(0, 1, 4));
  EXPECT_DOUBLE_EQ(limits.quota_cpus, 1.5);
  EXPECT_EQ(limits.quota_us, 150000);
  EXPECT_EQ(limits.period_us, 100000);
  EXPECT_EQ(limits.quota_source, "cgroup v2 /sys/fs/cgroup/ci.slice/job-7/cpu.max");
  EXPECT_EQ(limits.memory_limit_bytes, 512u << 20);  // the parent's
  EXPECT_EQ(limits.memory_source, "cgroup v2 /sys/fs/cgroup/ci.slice/memory.max");
  EXPECT_EQ(limits.EffectiveCpus(8), 2);  // min(3 allowed, ceil(1.5))

  // A tighter parent wins over the process's own cgroup.
  WriteTreeFile(root, "/sys/fs/cgroup/ci.slice/cpu.max", "50000 100000\n");
  const CpuLimits parent = ReadCpuLimits(root);
  EXPECT_DOUBLE_EQ(parent.quota_cpus, 0.5);
  EXPECT_EQ(parent.EffectiveCpus(8), 1);
}

TEST(CpuLimitsTest, CgroupV1CfsQuotaAndUnlimitedMemory) {
  const std::string root = ScratchRoot("v1");
  WriteTreeFile(root, "/proc/self/cgroup",
                "12:pids:/docker/abc\n5:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n"
                "1:name=systemd:/docker/abc\n0::/\n");
  WriteTreeFile(root, "/proc/self/mountinfo",
                "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
                "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup "
                "rw,cpu,cpuacct\n"
                "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n");
  WriteTreeFile(root, "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
  WriteTreeFile(root, "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
  WriteTreeFile(root, "/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "250000\n");
  WriteTreeFile(root, "/sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n");
  WriteTreeFile(root, "/sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes", "9223372036854771712\n");
  const CpuLimits limits = ReadCpuLimits(root);
  EXPECT_TRUE(limits.allowed.empty());  // no proc/self/status: unknown
  EXPECT_DOUBLE_EQ(limits.quota_cpus, 2.5);
  EXPECT_THAT(limits.quota_source, HasSubstr("cgroup v1 /sys/fs/cgroup/cpu,cpuacct/docker/abc/"));
  EXPECT_EQ(limits.memory_limit_bytes, 0u);  // "unlimited" sentinel
  EXPECT_EQ(limits.EffectiveCpus(8), 3);
  EXPECT_EQ(limits.EffectiveCpus(2), 2);  // the quota exceeds the machine

  WriteTreeFile(root, "/sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes", "1073741824\n");
  EXPECT_EQ(ReadCpuLimits(root).memory_limit_bytes, 1u << 30);
}

// Inside a container with its own cgroup namespace the mount's root is the container's
// cgroup; /proc/self/cgroup may name it from outside.
TEST(CpuLimitsTest, CgroupNamespaceMountRoot) {
  const std::string root = ScratchRoot("ns");
  WriteTreeFile(root, "/proc/self/cgroup", "0::/kubepods/pod1/c1\n");
  WriteTreeFile(root, "/proc/self/mountinfo", "25 30 0:22 /kubepods/pod1/c1 /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n");
  WriteTreeFile(root, "/sys/fs/cgroup/cpu.max", "200000 100000\n");
  const CpuLimits limits = ReadCpuLimits(root);
  EXPECT_DOUBLE_EQ(limits.quota_cpus, 2.0);
  EXPECT_EQ(limits.quota_source, "cgroup v2 /sys/fs/cgroup/cpu.max");
}

TEST(CpuLimitsTest, NoCgroupFileIsANoteNotAnError) {
  const std::string root = ScratchRoot("none");
  WriteTreeFile(root, "/proc/self/status", "Cpus_allowed_list:\t3\n");
  const CpuLimits limits = ReadCpuLimits(root);
  EXPECT_THAT(limits.allowed, ElementsAre(3));
  EXPECT_EQ(limits.quota_cpus, 0);
  EXPECT_EQ(limits.EffectiveCpus(16), 1);
  ASSERT_EQ(limits.notes.size(), 1u);
  EXPECT_THAT(limits.notes[0], HasSubstr("/proc/self/cgroup"));
}

TEST(CpuLimitsTest, ParseCpuMax) {
  int64_t quota = 0, period = 0;
  EXPECT_TRUE(ParseCpuMax("50000 100000", &quota, &period));
  EXPECT_EQ(quota, 50000);
  EXPECT_EQ(period, 100000);
  EXPECT_TRUE(ParseCpuMax("25000", &quota, &period));
  EXPECT_EQ(period, 100000);
  EXPECT_FALSE(ParseCpuMax("max 100000", &quota, &period));
  EXPECT_FALSE(ParseCpuMax("-5 100000", &quota, &period));
  EXPECT_FALSE(ParseCpuMax("10 0", &quota, &period));
  EXPECT_FALSE(ParseCpuMax("", &quota, &period));
}

// A recorded 20-CPU machine with an affinity mask of 6 CPUs and a 2.5-CPU quota: the
// host's logical CPUs (the default of every pool) are 3, the machine's still 20.
TEST(CpuLimitsTest, DetectHostRecordsLimitsAndUsesThemAsLogicalCpus) {
  const std::string root = testing::CopyFixture("20em64t-hybrid-1p6c2t+2ca4co1t", "hybrid-limits");
  ASSERT_FALSE(root.empty());
  WriteTreeFile(root, "/proc/self/status", "Cpus_allowed_list:\t0-3,12-13\n");
  WriteTreeFile(root, "/proc/self/cgroup", "0::/ci\n");
  WriteTreeFile(root, "/proc/self/mountinfo", kV2Mounts);
  WriteTreeFile(root, "/sys/fs/cgroup/ci/cpu.max", "250000 100000\n");
  WriteTreeFile(root, "/sys/fs/cgroup/ci/memory.max", "2147483648\n");
  for (bool hwloc : {true, false}) {
    absl::StatusOr<v1::HostInfo> host = DetectHost({.fsroot = root, .use_hwloc = hwloc});
    ASSERT_TRUE(host.ok()) << host.status();
    EXPECT_EQ(host->logical_cpus(), 3u) << hwloc;
    EXPECT_EQ(host->limits().machine_cpus(), 20u);
    EXPECT_EQ(host->limits().allowed_cpus(), 6u);
    EXPECT_THAT(host->limits().allowed_cpu_ids(), ElementsAre(0, 1, 2, 3, 12, 13));
    EXPECT_DOUBLE_EQ(host->limits().cpu_quota(), 2.5);
    EXPECT_EQ(host->limits().effective_cpus(), 3u);
    EXPECT_EQ(host->limits().memory_limit_bytes(), 2u << 30);
    EXPECT_EQ(host->physical_cores(), 14u);  // the machine is still described whole
    EXPECT_THAT(FormatHostText(*host), HasSubstr("allowed 6 of 20 machine CPUs (cpus 0-3,12-13), CPU quota 2.50 CPUs"));
  }
  // The recording without limits: all 20.
  absl::StatusOr<v1::HostInfo> plain = DetectHost({.fsroot = testing::FixtureRoot("20em64t-hybrid-1p6c2t+2ca4co1t")});
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->logical_cpus(), 20u);
  EXPECT_EQ(plain->limits().allowed_cpus(), 20u);
  EXPECT_EQ(plain->limits().cpu_quota(), 0);
}

}  // namespace
}  // namespace fleetmark::engine
