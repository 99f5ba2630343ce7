// Restricted views of recorded machines (issue 32, items 9 and 10): hwloc's recorded
// trees with a cgroup cpuset (a legacy cpuset filesystem, cgroup v1, cgroup v2) and
// offline CPUs as recorded, and edited copies of the hybrid machine restricted by a
// cgroup v1 / v2 cpuset file or by Cpus_allowed_list. The allowed CPUs are affinity AND
// cpuset AND online, classes are ranked on the whole machine and then restricted, caches
// and hwloc kinds list only allowed CPUs, and SMT counts count the CPUs there are. Each
// case with hwloc and with sysfs alone.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/topology/cpu_limits.h"
#include "engine/topology/host.h"
#include "engine/topology/host_text.h"
#include "engine/topology/placement.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/topology/fixtures.h"

namespace fleetmark::engine {
namespace {

using testing::CopyFixture;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using testing::FixtureRoot;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using testing::WriteTreeFile;

constexpr char kHybrid[] = "20em64t-hybrid-1p6c2t+2ca4co1t";  // P 0-11 (6 cores x 2), E 12-19

std::vector<uint32_t> Range(uint32_t first, uint32_t last) {
  std::vector<uint32_t> out;
  for (uint32_t cpu = first; cpu <= last; ++cpu) out.push_back(cpu);
  return out;
}

std::vector<uint32_t> Ids(const google::protobuf::RepeatedField<uint32_t>& cpus) {
  return std::vector<uint32_t>(cpus.begin(), cpus.end());
}

// Puts the recorded hybrid's session cgroup (cgroup v2 at /sys/fs/cgroup) in a cpuset of
// `cpus`, as hwloc reads it too (proc/self/cpuset, cgroup.controllers with cpuset).
void RestrictV2(const std::string& root, const std::string& cpus) {
  const std::string scope = "/user.slice/user-1001.slice/session-2.scope";
  WriteTreeFile(root, "/proc/self/cpuset", scope + "\n");
  WriteTreeFile(root, "/sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");
  WriteTreeFile(root, "/sys/fs/cgroup" + scope + "/cpuset.cpus.effective", cpus + "\n");
}

// Every list of CPUs the host shows as usable lies within the allowed CPUs, and no
// cache or hwloc kind is listed without one.
void ExpectOnlyAllowed(const v1::HostInfo& host) {
  const std::vector<uint32_t> allowed = Ids(host.limits().allowed_cpu_ids());
  auto within = [&](const google::protobuf::RepeatedField<uint32_t>& cpus) {
    for (uint32_t cpu : cpus) {
      if (std::find(allowed.begin(), allowed.end(), cpu) == allowed.end()) return false;
    }
    return true;
  };
  for (const v1::CoreKind& c : host.core_classes()) EXPECT_TRUE(within(c.cpus())) << c.ShortDebugString();
  for (const v1::CoreKind& k : host.core_kinds()) {
    EXPECT_TRUE(within(k.cpus())) << k.ShortDebugString();
    EXPECT_GT(k.cpus_size(), 0) << k.ShortDebugString();
  }
  for (const v1::CacheInfo& cache : host.caches()) {
    EXPECT_TRUE(within(cache.cpus())) << cache.ShortDebugString();
    EXPECT_GT(cache.cpus_size(), 0) << cache.ShortDebugString();
  }
  EXPECT_THAT(FormatHostText(host), Not(HasSubstr("| |")));
}

// The legacy cpuset filesystem (proc/mounts "cpuset", proc/self/cpuset /dummy, cpus
// 0-6,12-15) with CPU 4 offline: "allowed 15 of 15" before (hwloc saw 10).
TEST(RestrictedViewTest, LegacyCpusetFilesystem) {
  for (bool hwloc : {true, false}) {
    absl::StatusOr<v1::HostInfo> host = DetectHost({.fsroot = FixtureRoot("16amd64-8n2c-cpusets"), .use_hwloc = hwloc});
    ASSERT_TRUE(host.ok()) << host.status();
    EXPECT_EQ(host->limits().machine_cpus(), 15u) << hwloc;
    EXPECT_EQ(host->limits().allowed_cpus(), 10u) << hwloc;
    EXPECT_THAT(host->limits().allowed_cpu_ids(), ElementsAre(0, 1, 2, 3, 5, 6, 12, 13, 14, 15));
    EXPECT_EQ(host->limits().cpuset_source(), "cpuset /dev/cpuset/dummy/cpus");
    EXPECT_EQ(host->logical_cpus(), 10u);
    EXPECT_EQ(host->limits().effective_cpus(), 10u);
    EXPECT_EQ(host->physical_cores(), 15u);  // the machine, whole
    EXPECT_THAT(FormatHostText(*host), HasSubstr("allowed 10 of 15 machine CPUs (cpus 0-3,5-6,12-15; cpuset "));
    ExpectOnlyAllowed(*host);
  }
}

// A cgroup v2 cpuset (cpuset.cpus.effective 0-5 of 32): "allowed 32 of 32" and L3 groups
// "0-3 | 4-5 | | | |" before.
TEST(RestrictedViewTest, CgroupV2Cpuset) {
  for (bool hwloc : {true, false}) {
    absl::StatusOr<v1::HostInfo> host =
        DetectHost({.fsroot = FixtureRoot("32amd64-4s2n4c-cgroup2"), .use_hwloc = hwloc});
    ASSERT_TRUE(host.ok()) << host.status();
    EXPECT_EQ(host->limits().machine_cpus(), 32u) << hwloc;
    EXPECT_EQ(host->limits().allowed_cpus(), 6u) << hwloc;
    EXPECT_THAT(Ids(host->limits().allowed_cpu_ids()), ElementsAreArray(Range(0, 5)));
    EXPECT_THAT(host->limits().cpuset_source(),
                HasSubstr("cgroup v2 /cgroup/unified/uid_2008/job_15389/step_0/cpuset.cpus.effective"));
    EXPECT_EQ(host->logical_cpus(), 6u);
    ExpectOnlyAllowed(*host);
    const std::string text = FormatHostText(*host);
    EXPECT_THAT(text, HasSubstr("allowed 6 of 32 machine CPUs (cpus 0-5; cpuset cgroup v2 "));
    if (hwloc) {
      EXPECT_THAT(text, HasSubstr("x 2  cpus 0-3 | 4-5\n")) << text;  // the L3s with allowed CPUs
    }
  }
}

// Offline CPUs (0-3 and 21-23 of 24, cgroup v1 cpuset 4-20) with an affinity mask that
// still names all 24: "allowed 24 of 17 machine CPUs" before.
TEST(RestrictedViewTest, OfflineCpusAreNeverAllowed) {
  const std::string root = CopyFixture("offline-cpu0-node0", "offline-affinity");
  ASSERT_FALSE(root.empty());
  WriteTreeFile(root, "/proc/self/status", "Cpus_allowed_list:\t0-23\n");
  for (bool hwloc : {true, false}) {
    absl::StatusOr<v1::HostInfo> host = DetectHost({.fsroot = root, .use_hwloc = hwloc});
    ASSERT_TRUE(host.ok()) << host.status();
    EXPECT_EQ(host->limits().machine_cpus(), 17u) << hwloc;
    EXPECT_EQ(host->limits().allowed_cpus(), 17u) << hwloc;
    EXPECT_THAT(Ids(host->limits().allowed_cpu_ids()), ElementsAreArray(Range(4, 20)));
    EXPECT_EQ(host->limits().cpuset_source(), "cgroup v1 /sys/fs/cgroup/cpuset/cpuset.cpus");
    EXPECT_EQ(host->logical_cpus(), 17u);
    EXPECT_THAT(FormatHostText(*host), HasSubstr("allowed 17 of 17 machine CPUs"));
    ExpectOnlyAllowed(*host);
  }
  // The cgroup v1 cpuset narrower than the online CPUs.
  WriteTreeFile(root, "/sys/fs/cgroup/cpuset/cpuset.cpus", "4-9,20-23\n");
  const CpuLimits limits = ReadCpuLimits(root);
  EXPECT_THAT(limits.allowed, ElementsAre(4, 5, 6, 7, 8, 9, 20));
  EXPECT_THAT(limits.online, ElementsAreArray({4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}));
}

// SMT siblings offline (CPUs 2, 5, 13, 14 of 16; core 5+13 entirely): 7 cores with 12
// CPUs, printed "7 cores x 2 threads" (14 CPUs) before.
TEST(RestrictedViewTest, SmtCountsCountTheOnlineCpus) {
  for (bool hwloc : {true, false}) {
    absl::StatusOr<v1::HostInfo> host =
        DetectHost({.fsroot = FixtureRoot("16em64t-4s2c2t-offlines"), .use_hwloc = hwloc});
    ASSERT_TRUE(host.ok()) << host.status();
    EXPECT_EQ(host->limits().machine_cpus(), 12u) << hwloc;
    EXPECT_EQ(host->limits().allowed_cpus(), 12u) << hwloc;
    EXPECT_EQ(host->physical_cores(), 7u) << hwloc;
    ASSERT_EQ(host->core_classes_size(), 1) << hwloc;
    EXPECT_EQ(host->core_classes(0).cpus_size(), 12);
    EXPECT_EQ(host->core_classes(0).cores(), 7u);
    const std::string text = FormatHostText(*host);
    EXPECT_THAT(text, HasSubstr(" 7 cores, 12 threads")) << text;
    EXPECT_THAT(text, Not(HasSubstr("7 cores x 2 threads")));
    EXPECT_THAT(FormatHostSummary(*host), HasSubstr("(7 cores, 12 threads @"));
  }
}

// The hybrid machine restricted to its E-cores (12-19) three ways: a cgroup v2 cpuset,
// a cgroup v1 cpuset and Cpus_allowed_list. Before: the cgroup views ranked the E-cores
// alone as "performance", the Cpus_allowed_list view listed the P-cores as performance
// CPUs although none was allowed.
TEST(RestrictedViewTest, ClassesAreTheMachinesThenRestricted) {
  const std::string v2 = CopyFixture(kHybrid, "hybrid-v2");
  RestrictV2(v2, "12-19");
  const std::string v1 = CopyFixture(kHybrid, "hybrid-v1");
  WriteTreeFile(v1, "/proc/self/cpuset", "/job\n");  // where hwloc looks first
  WriteTreeFile(v1, "/proc/self/cgroup", "5:cpuset:/job\n1:name=systemd:/job\n");
  WriteTreeFile(v1, "/proc/mounts", "cgroup /sys/fs/cgroup/cpuset cgroup rw,nosuid,nodev,noexec,relatime,cpuset 0 0\n");
  WriteTreeFile(v1, "/sys/fs/cgroup/cpuset/cpuset.cpus", "0-19\n");
  WriteTreeFile(v1, "/sys/fs/cgroup/cpuset/job/cpuset.cpus", "12-19\n");
  const std::string affinity = CopyFixture(kHybrid, "hybrid-affinity");
  WriteTreeFile(affinity, "/proc/self/status", "Cpus_allowed_list:\t12-19\n");
  for (const std::string& root : {v2, v1, affinity}) {
    ASSERT_FALSE(root.empty());
    for (bool hwloc : {true, false}) {
      SCOPED_TRACE(absl::StrCat(root, hwloc ? " hwloc" : " sysfs"));
      absl::StatusOr<v1::HostInfo> host = DetectHost({.fsroot = root, .use_hwloc = hwloc});
      ASSERT_TRUE(host.ok()) << host.status();
      EXPECT_EQ(host->limits().allowed_cpus(), 8u);
      EXPECT_EQ(host->logical_cpus(), 8u);
      ASSERT_EQ(host->core_classes_size(), 2);
      const v1::CoreKind& performance = host->core_classes(0);
      EXPECT_EQ(performance.name(), "performance");
      EXPECT_THAT(performance.cpus(), IsEmpty());
      EXPECT_EQ(performance.cores(), 0u);
      EXPECT_THAT(Ids(performance.machine_cpus()), ElementsAreArray(Range(0, 11)));
      const v1::CoreKind& efficiency = host->core_classes(1);
      EXPECT_EQ(efficiency.name(), "efficiency");
      EXPECT_THAT(Ids(efficiency.cpus()), ElementsAreArray(Range(12, 19)));
      EXPECT_EQ(efficiency.cores(), 8u);
      ExpectOnlyAllowed(*host);
      const std::string text = FormatHostText(*host);
      EXPECT_THAT(text, HasSubstr("performance not available here (cpus 0-11 not allowed to this process)"));
      EXPECT_THAT(text, HasSubstr("efficiency  cpus 12-19"));
      // A placement on the class that is not here says so; the other runs inside it.
      absl::StatusOr<PlacementSpec> spec = ParsePlacement("class:performance");
      ASSERT_TRUE(spec.ok());
      absl::StatusOr<CpuSet> planned = PlanPlacement(*spec, *host, 2);
      EXPECT_TRUE(IsPlacementUnsupported(planned.status())) << planned.status();
      EXPECT_THAT(planned.status().message(), HasSubstr("none of the host's performance CPUs (0-11)"));
    }
  }
}

// Without CPU 0 (a P-core's first thread): performance keeps 11 of its 12 CPUs on 6
// cores, efficiency does not gain CPU 0.
TEST(RestrictedViewTest, WithoutCpu0) {
  const std::string root = CopyFixture(kHybrid, "hybrid-no-cpu0");
  ASSERT_FALSE(root.empty());
  RestrictV2(root, "1-19");
  for (bool hwloc : {true, false}) {
    SCOPED_TRACE(hwloc ? "hwloc" : "sysfs");
    absl::StatusOr<v1::HostInfo> host = DetectHost({.fsroot = root, .use_hwloc = hwloc});
    ASSERT_TRUE(host.ok()) << host.status();
    ASSERT_EQ(host->core_classes_size(), 2);
    EXPECT_THAT(Ids(host->core_classes(0).cpus()), ElementsAreArray(Range(1, 11)));
    EXPECT_EQ(host->core_classes(0).cores(), 6u);
    EXPECT_THAT(Ids(host->core_classes(1).cpus()), ElementsAreArray(Range(12, 19)));
    ExpectOnlyAllowed(*host);
    EXPECT_THAT(FormatHostText(*host), HasSubstr("performance cpus 1-11 (of 0-11)  6 cores, 11 threads"));
  }
}

}  // namespace
}  // namespace fleetmark::engine
