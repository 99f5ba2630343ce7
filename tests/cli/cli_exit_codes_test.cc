// The exit code table (coordinator/cli/exit_codes.h, docs/cli.md "Exit codes") through
// the real binary: a command's bad input is 2 with its "fleetmark <command>:" line, a
// coordinator nothing listens for is 5 (kExitUnavailable) with the connect hint.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cli/cli_fixture.h"

namespace {

using namespace fleetmark_cli_test;  // NOLINT: the fixture of this test folder
using ::testing::HasSubstr;
using ::testing::StartsWith;

// A loopback port nothing listens on: bound by the kernel's choice, then closed.
int ClosedLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  EXPECT_GE(fd, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  socklen_t length = sizeof address;
  EXPECT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length), 0);
  ::close(fd);
  return ntohs(address.sin_port);
}

TEST_F(CliTest, BadInputOfACommandIsExit2WithItsErrorLine) {
  CliResult r = Cli("topology extra");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err, "fleetmark topology: takes no arguments, got \"extra\"\n");
  r = Cli("list extra");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err, "fleetmark list: takes no arguments, got \"extra\"\n");
  r = Cli("plan validate " + (dir_ / "missing.txtpb").string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, StartsWith("fleetmark plan validate: "));
  r = Cli("runs");  // a group without its subcommand
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, StartsWith("fleetmark runs: needs a subcommand:\n  fleetmark runs "));
}

TEST_F(CliTest, AnUnreachableCoordinatorIsExit5) {
  const std::string coordinator = "127.0.0.1:" + std::to_string(ClosedLoopbackPort());
  for (const std::string command : {"runs list", "agents list"}) {
    CliResult r = Cli(command + " --coordinator " + coordinator);
    EXPECT_EQ(r.exit_code, 5) << command << ": " << r.err;
    EXPECT_THAT(r.err, StartsWith("fleetmark: ")) << command;
    EXPECT_THAT(r.err, HasSubstr("is a coordinator running at " + coordinator + " (--coordinator)")) << command;
  }
}

}  // namespace
