// `fleetmark topology` as users run it: the real binary on the recorded trees and on
// this machine, its JSON read back as the HostInfo agents send.
#include <cstdio>
#include <memory>
#include <string>

#include "fleetmark/v1/host.pb.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/topology/fixtures.h"

namespace fleetmark::engine {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct Output {
  int exit_code = -1;
  std::string text;
};

Output RunFleetmark(const std::string& args) {
  const std::string command = std::string(FLEETMARK_CLI_BINARY) + " " + args + " 2>&1";
  Output out;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), &pclose);
  if (!pipe) return out;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe.get())) > 0) out.text.append(buffer, n);
  const int status = pclose(pipe.release());
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

v1::HostInfo ParseHost(const std::string& json) {
  v1::HostInfo host;
  const auto status = google::protobuf::util::JsonStringToMessage(json, &host);
  EXPECT_TRUE(status.ok()) << status.ToString() << "\n" << json;
  return host;
}

TEST(TopologyCliTest, HybridFixtureJson) {
  const std::string root = testing::FixtureRoot("20em64t-hybrid-1p6c2t+2ca4co1t");
  Output out = RunFleetmark("topology --format json --fsroot '" + root + "'");
  ASSERT_EQ(out.exit_code, 0) << out.text;
  v1::HostInfo host = ParseHost(out.text);
  EXPECT_TRUE(host.smt());
  ASSERT_EQ(host.core_classes_size(), 2);
  EXPECT_EQ(host.core_classes(0).name(), "performance");
  EXPECT_EQ(host.core_classes(0).cores(), 6u);
  EXPECT_EQ(host.core_classes(0).threads_per_core(), 2u);
  EXPECT_EQ(host.core_classes(1).name(), "efficiency");
  EXPECT_EQ(host.core_classes(1).cores(), 8u);
  EXPECT_EQ(host.core_classes(1).threads_per_core(), 1u);
}

TEST(TopologyCliTest, FixturesAsText) {
  Output four = RunFleetmark("topology --fsroot '" + testing::FixtureRoot("16em64t-4s2c2t") + "'");
  ASSERT_EQ(four.exit_code, 0) << four.text;
  EXPECT_THAT(four.text, HasSubstr("16 logical, 8 physical cores, 4 packages"));
  EXPECT_THAT(four.text, HasSubstr("yes (cpu 0 siblings: 0,8)"));
  Output arm = RunFleetmark("topology --format text --fsroot '" +
                            testing::FixtureRoot("2arm-2c") + "'");
  ASSERT_EQ(arm.exit_code, 0) << arm.text;
  EXPECT_THAT(arm.text, HasSubstr("Cortex-A9"));
  EXPECT_THAT(arm.text, HasSubstr("2 logical, 2 physical cores"));
}

TEST(TopologyCliTest, LiveMachineAndBadInput) {
  Output live = RunFleetmark("topology --format json");
  ASSERT_EQ(live.exit_code, 0) << live.text;
  v1::HostInfo host = ParseHost(live.text);
  EXPECT_GE(host.logical_cpus(), 1u);
  EXPECT_EQ(host.topology_source(), "hwloc");
  ASSERT_GE(host.core_classes_size(), 1);
  EXPECT_EQ(host.core_classes(0).name(), "performance");

  EXPECT_EQ(RunFleetmark("topology --format csv").exit_code, 2);
  Output missing = RunFleetmark("topology --fsroot /nonexistent/fleetmark-root");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.text, HasSubstr("/nonexistent/fleetmark-root"));
}

}  // namespace
}  // namespace fleetmark::engine
