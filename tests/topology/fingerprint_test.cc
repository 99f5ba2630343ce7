// The device fingerprint's fields, hash and diff (engine/topology/fingerprint.h).
#include "engine/topology/fingerprint.h"

#include "engine/topology/conditions_text.h"

#include <set>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetmark::engine {
namespace {

v1::HostInfo SampleHost() {
  v1::HostInfo host;
  host.set_cpu_model("Cortex-A76");
  host.set_arch("aarch64");
  host.set_memory_bytes(8ULL << 30);
  host.set_kernel("6.1.0-18-arm64");
  host.set_os("Debian GNU/Linux 12 (bookworm)");
  host.set_governor("schedutil");
  v1::CoreKind* big = host.add_core_classes();
  big->set_name("performance");
  for (uint32_t cpu : {4, 5, 6, 7}) big->add_cpus(cpu);
  big->set_max_frequency_khz(2400000);
  v1::CoreKind* little = host.add_core_classes();
  little->set_name("efficiency");
  for (uint32_t cpu : {0, 1, 2, 3}) little->add_cpus(cpu);
  for (uint32_t cpu = 0; cpu < 8; ++cpu) host.mutable_limits()->add_allowed_cpu_ids(cpu);
  return host;
}

TEST(FingerprintTest, FieldsComeFromTheHost) {
  const v1::DeviceFingerprint fp = DeviceFingerprintOf(SampleHost());
  EXPECT_EQ(fp.cpu_model(), "Cortex-A76");
  EXPECT_EQ(fp.core_classes(), "performance 4-7 @ 2400 MHz; efficiency 0-3 @ ? MHz");
  EXPECT_EQ(fp.allowed_cpu_list(), "0-7");
  EXPECT_EQ(fp.kernel(), "6.1.0-18-arm64");
  EXPECT_EQ(fp.os_build(), "Debian GNU/Linux 12 (bookworm)");
  EXPECT_EQ(fp.governor(), "schedutil");
  EXPECT_FALSE(fp.engine_version().empty());
  EXPECT_FALSE(fp.compiler().empty());
  EXPECT_EQ(fp.hash().size(), 16u);
  EXPECT_EQ(fp.hash(), FingerprintHash(fp));
  std::set<std::string> names;
  for (const FingerprintField& f : FingerprintFields(fp)) names.insert(f.name);
  EXPECT_EQ(names.size(), 14u);  // every field once, the hash not among them
}

TEST(FingerprintTest, AndroidBuildFingerprintIsTheOsBuild) {
  v1::HostInfo host = SampleHost();
  host.mutable_android()->set_fingerprint("google/husky/husky:14/UQ1A.240205.004/1:user/release-keys");
  EXPECT_EQ(DeviceFingerprintOf(host).os_build(), "google/husky/husky:14/UQ1A.240205.004/1:user/release-keys");
  host.mutable_android()->set_fingerprint("unknown");
  EXPECT_EQ(DeviceFingerprintOf(host).os_build(), "Debian GNU/Linux 12 (bookworm)");
}

TEST(FingerprintTest, ResultsLimitsAndGovernorWinOverTheHosts) {
  v1::CaseResult result;
  result.mutable_limits()->add_allowed_cpu_ids(2);
  result.mutable_limits()->add_allowed_cpu_ids(3);
  result.mutable_limits()->set_cpu_quota(1.5);
  result.mutable_env_before()->set_governor("performance");
  const v1::DeviceFingerprint fp = DeviceFingerprintOf(SampleHost(), result);
  EXPECT_EQ(fp.allowed_cpu_list(), "2-3");
  EXPECT_DOUBLE_EQ(fp.cpu_quota(), 1.5);
  EXPECT_EQ(fp.governor(), "performance");
  EXPECT_NE(fp.hash(), DeviceFingerprintOf(SampleHost()).hash());
}

// The allowed CPUs are a list, named allowed_cpu_list (issue 32, item 12: the
// fingerprint's allowed_cpus held a list where ResourceLimits.allowed_cpus is a count).
// The deprecated field still carries the same list, and a fingerprint stored with only
// it keeps its hash and its diff; the classes are the machine's, whatever is allowed.
TEST(FingerprintTest, TheAllowedCpuListAndStoredFingerprints) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  const v1::DeviceFingerprint fp = DeviceFingerprintOf(SampleHost());
  EXPECT_EQ(fp.allowed_cpus(), fp.allowed_cpu_list());
  v1::DeviceFingerprint stored = fp;  // as written before allowed_cpu_list existed
  stored.clear_allowed_cpu_list();
  EXPECT_EQ(FingerprintHash(stored), fp.hash());
  EXPECT_TRUE(DiffFingerprints(stored, fp).empty());
  v1::DeviceFingerprint other = stored;
  other.set_allowed_cpus("0-3");
  ASSERT_EQ(DiffFingerprints(other, fp).size(), 1u);
  EXPECT_EQ(DescribeChanges(DiffFingerprints(other, fp)), "allowed cpus 0-3 → 0-7");
#pragma GCC diagnostic pop
  v1::HostInfo restricted = SampleHost();
  restricted.mutable_core_classes(0)->clear_cpus();  // performance not allowed here
  for (uint32_t cpu : {4, 5, 6, 7}) restricted.mutable_core_classes(0)->add_machine_cpus(cpu);
  EXPECT_EQ(DeviceFingerprintOf(restricted).core_classes(), fp.core_classes());
}

TEST(FingerprintTest, HashIsStableAndIgnoresTheStoredHash) {
  v1::DeviceFingerprint fp;
  fp.set_kernel("6.1.0-18");
  // Pinned: the canonical lines' FNV-1a 64 must not change between builds, or every
  // stored history would split at the upgrade.
  const std::string pinned = FingerprintHash(fp);
  fp.set_hash("not a hash");
  EXPECT_EQ(FingerprintHash(fp), pinned);
  v1::DeviceFingerprint same;
  same.set_kernel("6.1.0-18");
  EXPECT_EQ(FingerprintHash(same), pinned);
  same.set_kernel("6.1.0-21");
  EXPECT_NE(FingerprintHash(same), pinned);
  v1::DeviceFingerprint empty;
  // FNV-1a 64 of the 14 lines "cpu=\n" ... "emulated=no\n", computed apart (Python).
  EXPECT_EQ(FingerprintHash(empty), "8cdc128f97600fa4");
}

TEST(FingerprintTest, DiffListsTheChangedFieldsInOrder) {
  const v1::DeviceFingerprint a = DeviceFingerprintOf(SampleHost());
  v1::HostInfo changed = SampleHost();
  changed.set_kernel("6.1.0-21-arm64");
  changed.set_governor("performance");
  const v1::DeviceFingerprint b = DeviceFingerprintOf(changed);
  const std::vector<FingerprintChange> changes = DiffFingerprints(a, b);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].field, "kernel");
  EXPECT_EQ(changes[0].before, "6.1.0-18-arm64");
  EXPECT_EQ(changes[0].after, "6.1.0-21-arm64");
  EXPECT_EQ(changes[1].field, "governor");
  EXPECT_EQ(DescribeChanges(changes), "kernel 6.1.0-18-arm64 → 6.1.0-21-arm64; governor schedutil → performance");
  EXPECT_TRUE(DiffFingerprints(a, a).empty());
  EXPECT_EQ(DescribeChanges({}), "");
}

TEST(FingerprintTest, EmptyValuesShowAsUnknown) {
  v1::DeviceFingerprint a;
  v1::DeviceFingerprint b;
  b.set_governor("performance");
  EXPECT_EQ(DescribeChanges(DiffFingerprints(a, b)), "governor ? → performance");
}

TEST(FingerprintTest, DifferingFieldsAcrossSides) {
  const v1::DeviceFingerprint a = DeviceFingerprintOf(SampleHost());
  v1::HostInfo other = SampleHost();
  other.set_kernel("6.6.0");
  const v1::DeviceFingerprint b = DeviceFingerprintOf(other);
  const std::vector<FingerprintRow> rows = DifferingFingerprintFields({a, v1::DeviceFingerprint(), b});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].field, "kernel");
  EXPECT_EQ(rows[0].values, std::vector<std::string>({"6.1.0-18-arm64", "unknown", "6.6.0"}));
  EXPECT_TRUE(DifferingFingerprintFields({a, a}).empty());
  EXPECT_TRUE(DifferingFingerprintFields({a, v1::DeviceFingerprint()}).empty());  // one side known
  EXPECT_TRUE(DifferingFingerprintFields({}).empty());
}

TEST(FingerprintTest, PrevailingFingerprintIsTheMostCommon) {
  v1::CaseResult r1, r2, r3, none;
  *r1.mutable_fingerprint() = DeviceFingerprintOf(SampleHost());
  v1::HostInfo other = SampleHost();
  other.set_governor("performance");
  *r2.mutable_fingerprint() = DeviceFingerprintOf(other);
  *r3.mutable_fingerprint() = DeviceFingerprintOf(other);
  int distinct = 0;
  EXPECT_EQ(PrevailingFingerprint({&r1, &none, &r2, &r3}, &distinct).governor(), "performance");
  EXPECT_EQ(distinct, 2);
  EXPECT_TRUE(PrevailingFingerprint({&none}, &distinct).hash().empty());
  EXPECT_EQ(distinct, 0);
}

// One rule for results files and imports: the prevailing fingerprint of the results,
// else the device's own when none of them carries one.
TEST(FingerprintTest, MeasuredFingerprintIsTheResultsPrevailingOneElseTheDevicesOwn) {
  v1::HostInfo other = SampleHost();
  other.set_governor("performance");
  const v1::DeviceFingerprint own = DeviceFingerprintOf(SampleHost());
  google::protobuf::RepeatedPtrField<v1::CaseResult> results;
  results.Add();  // no fingerprint
  EXPECT_EQ(MeasuredFingerprint(results, own).hash(), own.hash());
  *results.Add()->mutable_fingerprint() = DeviceFingerprintOf(other);
  EXPECT_EQ(MeasuredFingerprint(results, own).governor(), "performance");
  EXPECT_TRUE(MeasuredFingerprint({}, v1::DeviceFingerprint()).hash().empty());
}

TEST(ConditionsTextTest, NamesTheRecordedConditionsAndLeavesUnknownOut) {
  v1::EnvSnapshot env;
  env.set_battery_level_percent(81);
  env.set_battery_charging(true);
  env.add_temperatures_c(41.0);
  env.add_temperatures_c(47.25);
  env.set_load_average_1m(0.42);
  env.set_unix_time_ns(1);
  env.set_free_memory_bytes(uint64_t{6021} << 20);
  env.set_governor("schedutil");
  env.add_gate_failures("free memory: 6021 MiB < 9000 MiB");
  EXPECT_EQ(FormatConditions(env),
            "battery 81 % charging, hottest zone 47.2 °C, load 0.42, free memory 6021 MiB, governor schedutil, "
            "gates failed: free memory: 6021 MiB < 9000 MiB");
  v1::EnvSnapshot no_battery;
  no_battery.set_battery_level_percent(-1);
  no_battery.set_other_cpu_measured(true);
  no_battery.set_other_cpu_percent(3.14);
  EXPECT_EQ(FormatConditions(no_battery), "other CPU 3.1 %");
  EXPECT_EQ(FormatConditions(v1::EnvSnapshot()), "no conditions recorded");
}

TEST(ConditionsTextTest, RangeGivesEachKnownValuesLowAndHighAndCountsTheFlaggedSnapshots) {
  v1::EnvSnapshot a;
  a.set_battery_level_percent(81);
  a.add_temperatures_c(41.0);
  a.set_load_average_1m(0.42);
  a.set_unix_time_ns(1);
  a.set_free_memory_bytes(uint64_t{6021} << 20);
  a.set_governor("schedutil");
  v1::EnvSnapshot b = a;
  b.set_battery_level_percent(78);
  b.set_battery_charging(true);
  b.clear_temperatures_c();
  b.add_temperatures_c(47.5);
  b.add_temperatures_c(30.0);
  b.set_load_average_1m(2.31);
  b.set_trip_point_crossed(true);
  b.set_other_cpu_measured(true);
  b.set_other_cpu_percent(3.14);
  b.add_gate_failures("load: 2.31 > 2.00");
  v1::EnvSnapshot unknown;  // knows nothing: changes no range
  unknown.set_battery_level_percent(-1);
  EXPECT_EQ(FormatConditionsRange({&a, &b, &unknown}),
            "battery 78–81 % (charging), hottest zone 41.0–47.5 °C, load 0.42–2.31, free memory 6021 MiB, "
            "governor schedutil, other CPU ≤ 3.1 %, trip point crossed in 1 of 3, gates failed in 1 of 3");
  b.set_governor("performance");
  EXPECT_THAT(FormatConditionsRange({&a, &b}), ::testing::HasSubstr("governor schedutil/performance"));
  EXPECT_EQ(FormatConditionsRange({&unknown}), "no conditions recorded");
  EXPECT_EQ(FormatConditionsRange({}), "no conditions recorded");
}

}  // namespace
}  // namespace fleetmark::engine
