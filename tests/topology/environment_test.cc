#include "engine/topology/environment.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetmark::engine {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A small recorded tree written by the test: 2 CPUs, 2 thermal zones.
class FakeTree {
 public:
  FakeTree() : root_(std::filesystem::temp_directory_path() / ("fleetmark-env-" + std::to_string(getpid()))) {
    Write("sys/devices/system/cpu/online", "0-1\n");
    Write("sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq", "2400000\n");
    Write("sys/devices/system/cpu/cpu1/cpufreq/scaling_cur_freq", "1800000\n");
    Write("sys/devices/system/cpu/cpu0/thermal_throttle/core_throttle_count", "3\n");
    Write("sys/devices/system/cpu/cpu1/thermal_throttle/core_throttle_count", "4\n");
    Write("sys/class/thermal/thermal_zone0/type", "x86_pkg_temp\n");
    Write("sys/class/thermal/thermal_zone0/temp", "54000\n");
    Write("sys/class/thermal/thermal_zone0/trip_point_0_type", "passive\n");
    Write("sys/class/thermal/thermal_zone0/trip_point_0_temp", "90000\n");
    Write("sys/class/thermal/thermal_zone1/type", "acpitz\n");
    Write("sys/class/thermal/thermal_zone1/temp", "-5000\n");
    Write("proc/loadavg", "1.25 0.80 0.50 2/300 1234\n");
  }
  ~FakeTree() { std::filesystem::remove_all(root_); }
  void Write(const std::string& path, const std::string& text) {
    std::filesystem::create_directories((root_ / path).parent_path());
    std::ofstream(root_ / path) << text;
  }
  std::string root() const { return root_.string(); }

 private:
  std::filesystem::path root_;
};

TEST(TakeEnvSnapshotTest, ReadsFrequenciesTemperaturesAndLoad) {
  FakeTree tree;
  v1::EnvSnapshot snap = TakeEnvSnapshot(tree.root());
  EXPECT_THAT(snap.cpu_frequency_khz(), ElementsAre(2400000, 1800000));
  EXPECT_THAT(snap.temperatures_c(), ElementsAre(54.0, -5.0));
  EXPECT_THAT(snap.thermal_zone_types(), ElementsAre("x86_pkg_temp", "acpitz"));
  EXPECT_FALSE(snap.trip_point_crossed());
  EXPECT_DOUBLE_EQ(snap.load_average_1m(), 1.25);
  EXPECT_TRUE(snap.thermal_throttle_readable());
  EXPECT_EQ(snap.thermal_throttle_events(), 7u);
  EXPECT_GT(snap.unix_time_ns(), 0);

  tree.Write("sys/class/thermal/thermal_zone0/temp", "91000\n");
  EXPECT_TRUE(TakeEnvSnapshot(tree.root()).trip_point_crossed());
}

TEST(TakeEnvSnapshotTest, LiveMachineNeverFails) {
  v1::EnvSnapshot snap = TakeEnvSnapshot();
  EXPECT_GE(snap.load_average_1m(), 0.0);
  EXPECT_EQ(snap.temperatures_c_size(), snap.thermal_zone_types_size());
  EXPECT_GT(snap.unix_time_ns(), 0);
  v1::EnvSnapshot missing = TakeEnvSnapshot("/nonexistent/fleetmark-root");
  EXPECT_EQ(missing.cpu_frequency_khz_size(), 0);
  EXPECT_EQ(missing.temperatures_c_size(), 0);
  EXPECT_FALSE(missing.thermal_throttle_readable());
}

v1::EnvSnapshot Frequencies(std::vector<uint64_t> khz) {
  v1::EnvSnapshot snap;
  for (uint64_t f : khz) snap.add_cpu_frequency_khz(f);
  return snap;
}

v1::HostInfo TwoClasses() {
  v1::HostInfo host;
  v1::CoreKind* p = host.add_core_classes();
  p->set_name("performance");
  p->add_cpus(0);
  p->add_cpus(1);
  v1::CoreKind* e = host.add_core_classes();
  e->set_name("efficiency");
  e->add_cpus(2);
  e->add_cpus(3);
  return host;
}

TEST(ThrottledTest, FrequencyDropBeyondThresholdPerClass) {
  const v1::HostInfo host = TwoClasses();
  // An idle core clocking down (CPU 1) is not throttling: the class max holds.
  EXPECT_FALSE(Throttled(Frequencies({5000000, 5000000, 3900000, 3900000}),
                         Frequencies({5000000, 800000, 3900000, 3900000}), host)
                   .throttled);
  // A 10% drop is within the threshold.
  EXPECT_FALSE(Throttled(Frequencies({5000000, 0, 3900000, 0}), Frequencies({4500000, 0, 3900000, 0}), host).throttled);
  ThrottleVerdict v = Throttled(Frequencies({5000000, 5000000, 3900000, 3900000}),
                                Frequencies({3600000, 3500000, 3900000, 3900000}), host);
  EXPECT_TRUE(v.throttled);
  EXPECT_THAT(v.reason, HasSubstr("class performance"));
  EXPECT_THAT(v.reason, HasSubstr("5000000 -> 3600000"));
  // No frequencies at all (VMs): no verdict from frequency.
  EXPECT_FALSE(Throttled({}, {}, host).throttled);
  // Without classes every CPU forms one group.
  EXPECT_TRUE(Throttled(Frequencies({2000000}), Frequencies({1000000}), v1::HostInfo{}).throttled);
}

TEST(ThrottledTest, TripPointsAndThrottleEvents) {
  v1::EnvSnapshot before, after;
  after.set_trip_point_crossed(true);
  ThrottleVerdict trip = Throttled(before, after, {});
  EXPECT_TRUE(trip.throttled);
  EXPECT_THAT(trip.reason, HasSubstr("trip point"));

  v1::EnvSnapshot b2, a2;
  b2.set_thermal_throttle_readable(true);
  a2.set_thermal_throttle_readable(true);
  b2.set_thermal_throttle_events(7);
  a2.set_thermal_throttle_events(7);
  EXPECT_FALSE(Throttled(b2, a2, {}).throttled);
  a2.set_thermal_throttle_events(9);
  ThrottleVerdict events = Throttled(b2, a2, {});
  EXPECT_TRUE(events.throttled);
  EXPECT_THAT(events.reason, HasSubstr("+2"));
}

}  // namespace
}  // namespace fleetmark::engine
