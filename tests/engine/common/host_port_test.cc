#include "engine/common/host_port.h"

#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace fleetmark {
namespace {

TEST(ParsePortTest, DigitsOnlyInRange) {
  EXPECT_EQ(ParsePort("80", 1), 80);
  EXPECT_EQ(ParsePort("65535", 1), 65535);
  EXPECT_EQ(ParsePort("0", 0), 0);
  for (const char* bad : {"", "0", "+80", "-1", " 80", "80 ", "65536", "0x50", "999999", "8a"}) {
    EXPECT_FALSE(ParsePort(bad, 1).has_value()) << bad;
  }
}

TEST(ParseHostPortTest, APortWithASignIsRefused) {
  EXPECT_TRUE(ParseHostPort("127.0.0.1:80", "f").ok());
  EXPECT_FALSE(ParseHostPort("127.0.0.1:+80", "f").ok());
}

TEST(CheckDialAddressTest, AcceptsTheDocumentedForms) {
  for (const char* good :
       {"127.0.0.1:7443", "[::1]:7443", "[fe80::1]:1", "coord.lan:7443", "localhost:1", "a-b.c1:65535",
        "dns:///coord.lan:7443", "dns://8.8.8.8/coord.lan:7443", "dns://[::1]:53/coord:1", "dns:coord:1",
        "ipv4:10.0.0.5:7000", "ipv4:10.0.0.5:7000,10.0.0.6:7000", "ipv6:[::1]:7000", "unix:/run/fm.sock",
        "unix:relative.sock"}) {
    EXPECT_TRUE(CheckDialAddress(good, "--coordinator").ok()) << good << ": " << CheckDialAddress(good, "x");
  }
}

TEST(CheckDialAddressTest, RefusesHostsAndPortsThatCannotBeValidNamingTheFlag) {
  const std::string long_label(300, 'a');
  const std::string long_name = std::string(63, 'a') + "." + std::string(63, 'b') + "." + std::string(63, 'c') + "." +
                                std::string(63, 'd') + ":1";  // 255 characters of host
  for (const std::string& bad : {std::string("\x1b[31m:1"),
                                 std::string("\xff:1"),
                                 std::string("a b:1"),
                                 std::string(" 127.0.0.1:1"),
                                 long_label + ":1",
                                 long_name,
                                 std::string("unix:"),
                                 std::string("dns:///:1"),
                                 std::string("127.0.0.1:+80"),
                                 std::string("127.0.0.1:0"),
                                 std::string("127.0.0.1:65536"),
                                 std::string("127.0.0.1"),
                                 std::string(""),
                                 std::string("::1:80"),
                                 std::string("[coord]:80"),
                                 std::string("a..b:1"),
                                 std::string("ipv4:coord:1"),
                                 std::string("ipv4:[::1]:1"),
                                 std::string("ipv6:127.0.0.1:1"),
                                 std::string("dns://coord/x:1"),
                                 std::string("unix:/a\nb"),
                                 std::string("http://coord:1")}) {
    const absl::Status status = CheckDialAddress(bad, "--coordinator");
    ASSERT_FALSE(status.ok()) << bad;
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StartsWith(status.message(), "--coordinator: expected IP:PORT, [IPv6]:PORT, HOST:PORT, "))
        << status;
    EXPECT_NE(status.message().find("PORT: 1..65535, digits only"), std::string::npos) << status;
    EXPECT_EQ(status.message().find('\x1b'), std::string::npos) << status;
    EXPECT_EQ(status.message().find('\n'), std::string::npos) << status;
  }
}

}  // namespace
}  // namespace fleetmark
