#include "agent/target.h"

#include "gtest/gtest.h"

namespace fleetmark::agent {
namespace {

TEST(TargetTest, IpLiteralsBypassTheResolver) {
  EXPECT_EQ(*CoordinatorTarget("10.0.0.5:7000"), "ipv4:10.0.0.5:7000");
  EXPECT_EQ(*CoordinatorTarget("[::1]:7000"), "ipv6:[::1]:7000");
  EXPECT_EQ(*CoordinatorTarget("[fe80::1]:65535"), "ipv6:[fe80::1]:65535");
}

TEST(TargetTest, NamesUseDnsAndSchemesPassThrough) {
  EXPECT_EQ(*CoordinatorTarget("coord.lan:7443"), "dns:///coord.lan:7443");
  EXPECT_EQ(*CoordinatorTarget("unix:/run/fleetmark.sock"), "unix:/run/fleetmark.sock");
  EXPECT_EQ(*CoordinatorTarget("ipv4:127.0.0.1:1"), "ipv4:127.0.0.1:1");
}

TEST(TargetTest, BadAddressesAreRefusedWithTheValue) {
  for (const char* bad : {"", "127.0.0.1", "127.0.0.1:0", "127.0.0.1:65536", "host:port", "::1:7000", "[::1]7000",
                          "[nothex]:7000", ":7000", "127.0.0.1:+80", "127.0.0.1: 80"}) {
    auto target = CoordinatorTarget(bad);
    ASSERT_FALSE(target.ok()) << bad;
    EXPECT_TRUE(absl::IsInvalidArgument(target.status())) << bad;
    EXPECT_NE(target.status().message().find(std::string("\"") + bad + "\""), std::string::npos) << target.status();
  }
}

}  // namespace
}  // namespace fleetmark::agent
