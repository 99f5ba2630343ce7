// deploy/stack.sh and deploy/pg.sh as a user runs them: each test brings up its own
// stack (private PostgreSQL, real fleetmark-coordinator, real fleetmark-agent and the
// fleetmark CLI from this build) in a fresh directory and takes it down at the end.
// Also the binaries' --help and the agent's spool directory lock, end to end.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/fleet_harness.h"
#include "tests/integration/subprocess.h"

namespace fleetmark::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kStack[] = FLEETMARK_SOURCE_DIR "/deploy/stack.sh";
constexpr char kPg[] = FLEETMARK_SOURCE_DIR "/deploy/pg.sh";
constexpr char kCli[] = FLEETMARK_BUILD_DIR "/coordinator/cli/fleetmark";

struct Outcome {
  int exit_code = -1;  // -1: killed or timed out
  std::string output;  // stdout and stderr, interleaved
};

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string Trimmed(const std::string& path) { return std::string(absl::StripAsciiWhitespace(Slurp(path))); }

bool PostgresInstalled() { return RunCommand({"/bin/sh", "-c", "ls /usr/lib/postgresql/*/bin/initdb"}).ok(); }

// The NUL-separated command line of `pid` ("" if it is gone).
std::string CmdLine(pid_t pid) { return Slurp(absl::StrCat("/proc/", pid, "/cmdline")); }

class StackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!PostgresInstalled()) {
      if (PgRequired()) FAIL() << "PostgreSQL server not installed (deploy/install-deps.sh run)";
      GTEST_SKIP() << "PostgreSQL server not installed";
    }
    dir_ = MakeTempDir("fleetmark-stack-test");
    ASSERT_FALSE(dir_.empty());
  }
  void TearDown() override {
    if (dir_.empty()) return;
    const Outcome down = Run({kStack, "down", dir_});
    EXPECT_EQ(down.exit_code, 0) << down.output;
    RemoveTree(dir_);
  }

  // Runs argv (with the stack's environment) to completion; up to 3 minutes.
  Outcome Run(const std::vector<std::string>& argv) {
    const std::string log = absl::StrCat(dir_, "/command.", ++commands_, ".log");
    absl::StatusOr<std::unique_ptr<Subprocess>> process = Subprocess::Start(
        argv, log, {absl::StrCat("FLEETMARK_BUILD=", FLEETMARK_BUILD_DIR), "FLEETMARK_AGENT_NAME=stack-test"});
    if (!process.ok()) return {-1, process.status().ToString()};
    absl::StatusOr<ExitInfo> exit = (*process)->Wait(absl::Minutes(3));
    Outcome outcome;
    outcome.output = (*process)->Log();
    if (exit.ok() && exit->exited) outcome.exit_code = exit->exit_code;
    return outcome;
  }
  Outcome Stack(const std::string& command) { return Run({kStack, command, dir_}); }

  pid_t Pid(const std::string& name) {
    int pid = 0;
    return absl::SimpleAtoi(Trimmed(absl::StrCat(dir_, "/", name, ".pid")), &pid) ? pid : 0;
  }
  std::string PgPort() { return Trimmed(dir_ + "/pg/port"); }
  std::vector<std::string> CliFlags() {
    return {absl::StrCat("--coordinator=127.0.0.1:", Trimmed(dir_ + "/coordinator.port")),
            absl::StrCat("--admin_token_file=", dir_, "/admin_token")};
  }

  void Up() {
    const Outcome up = Stack("up");
    ASSERT_EQ(up.exit_code, 0) << up.output;
    ASSERT_GT(Pid("coordinator"), 0);
    ASSERT_GT(Pid("agent"), 0);
  }

  std::string dir_;
  int commands_ = 0;
};

TEST(BinaryHelpTest, HelpListsEachBinarysOwnFlags) {
  for (const auto& [binary, flags] :
       {std::pair<std::string, std::vector<std::string>>{
            FLEETMARK_AGENT_BIN,
            {"--coordinator", "--token_file", "--spool_dir", "--labels",
             // static device builds have no NSS: the help names gRPC's DNS-server form
             "dns://DNS_SERVER_IP/HOST:PORT"}},
        {FLEETMARK_COORDINATOR_BIN, {"--database_uri", "--store", "--listen_address", "--admin_token_file"}}}) {
    const std::string dir = MakeTempDir("fleetmark-help-test");
    absl::StatusOr<std::unique_ptr<Subprocess>> process = Subprocess::Start({binary, "--help"}, dir + "/help.log");
    ASSERT_TRUE(process.ok()) << process.status();
    ASSERT_TRUE((*process)->Wait(absl::Seconds(30)).ok());
    const std::string help = (*process)->Log();
    RemoveTree(dir);
    EXPECT_THAT(help, Not(HasSubstr("No flags matched"))) << binary;
    for (const std::string& flag : flags) EXPECT_THAT(help, HasSubstr(flag)) << binary;
    // Only the binary's own flags: gRPC/Abseil internals are for --helpfull.
    EXPECT_THAT(help, Not(HasSubstr("--flagfile"))) << binary;
  }
}

TEST(BinaryFlagsTest, RepeatedFlagsAndStrayArgumentsExit2) {
  const std::string dir = MakeTempDir("fleetmark-flags-test");
  const std::string token_dir = dir + "/token-dir";
  ASSERT_EQ(::mkdir(token_dir.c_str(), 0700), 0);
  struct Case {
    std::vector<std::string> argv;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{FLEETMARK_AGENT_BIN, "--name", "y", "--name=z", "--coordinator=127.0.0.1:1"}, "--name is given twice"},
      {{FLEETMARK_AGENT_BIN, "--coordinator=127.0.0.1:1", "extra_arg"}, "unexpected argument \"extra_arg\""},
      {{FLEETMARK_COORDINATOR_BIN, "--database_uri=a", "--database_uri=b"}, "--database_uri is given twice"},
      {{FLEETMARK_COORDINATOR_BIN, "--database_uri=postgresql://x@127.0.0.1:1/x", "--admin_token_file=" + token_dir},
       "(a directory)"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::unique_ptr<Subprocess>> process = Subprocess::Start(c.argv, dir + "/flags.log");
    ASSERT_TRUE(process.ok()) << process.status();
    absl::StatusOr<ExitInfo> exit = (*process)->Wait(absl::Seconds(30));
    ASSERT_TRUE(exit.ok()) << exit.status();
    EXPECT_TRUE(exit->exited && exit->exit_code == 2) << c.argv[1] << ": " << (*process)->Log();
    EXPECT_THAT((*process)->Log(), HasSubstr(c.says)) << c.argv[0];
  }
  RemoveTree(dir);
}

// A port already in use (another coordinator) is one line naming the flag, before the
// coordinator touches its database or serves anything: for the gRPC address and for the
// web view's (which used to be found busy only after gRPC was serving).
TEST(BinaryFlagsTest, APortInUseIsNamedBeforeAnythingStarts) {
  const std::string dir = MakeTempDir("fleetmark-port-in-use-test");
  const int holder = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(holder, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(holder, reinterpret_cast<sockaddr*>(&address), sizeof address), 0) << std::strerror(errno);
  ASSERT_EQ(::listen(holder, 4), 0);
  socklen_t length = sizeof address;
  ASSERT_EQ(::getsockname(holder, reinterpret_cast<sockaddr*>(&address), &length), 0);
  const std::string busy = absl::StrCat("127.0.0.1:", ntohs(address.sin_port));
  for (const std::string& flag : {std::string("listen_address"), std::string("http_address")}) {
    std::vector<std::string> argv = {FLEETMARK_COORDINATOR_BIN, "--database_uri=postgresql://x@127.0.0.1:1/x"};
    argv.push_back(flag == "listen_address" ? "--listen_address=" + busy : "--listen_address=127.0.0.1:0");
    if (flag == "http_address") argv.push_back("--http_address=" + busy);
    absl::StatusOr<std::unique_ptr<Subprocess>> process = Subprocess::Start(argv, dir + "/" + flag + ".log");
    ASSERT_TRUE(process.ok()) << process.status();
    absl::StatusOr<ExitInfo> exit = (*process)->Wait(absl::Seconds(60));
    ASSERT_TRUE(exit.ok()) << exit.status();
    const std::string log = (*process)->Log();
    EXPECT_TRUE(exit->exited && exit->exit_code == 1) << log;
    EXPECT_THAT(log, HasSubstr(absl::StrCat("fleetmark-coordinator: --", flag, "=", busy, ": the port is in use")))
        << log;
    EXPECT_THAT(log, Not(HasSubstr("serving gRPC"))) << log;
    EXPECT_THAT(log, Not(HasSubstr("chttp2"))) << log;  // no raw gRPC core error
  }
  ::close(holder);
  RemoveTree(dir);
}

// Issue 16, item 3: the daemons' command lines behave like the CLI's: an unknown flag
// or a bad value exits 2 naming the flag, --help and --version exit 0, the help shows
// no source paths and no test hooks, --version names version, commit and build type.
TEST(BinaryFlagsTest, DaemonsExit2OnBadFlagsAnd0OnHelpAndVersion) {
  const std::string dir = MakeTempDir("fleetmark-daemon-flags-test");
  struct Case {
    std::vector<std::string> argv;
    int exit_code;
    std::string says;
  };
  const std::string agent = FLEETMARK_AGENT_BIN, coordinator = FLEETMARK_COORDINATOR_BIN;
  const std::vector<Case> cases = {
      {{agent, "--bogus=1"}, 2, "fleetmark-agent: unknown flag --bogus=1"},
      {{coordinator, "--bogus"}, 2, "fleetmark-coordinator: unknown flag --bogus"},
      {{agent, "--reconnect_max_delay=abc"}, 2, "fleetmark-agent: --reconnect_max_delay: "},
      {{coordinator, "--max_attempts=x"}, 2, "fleetmark-coordinator: --max_attempts: "},
      // The in-memory store: a known name, alone (no PostgreSQL URI), on loopback, no web view.
      {{coordinator, "--store=sqlite"}, 2, "fleetmark-coordinator: --store: postgres or memory, got \"sqlite\""},
      {{coordinator, "--store=memory", "--database_uri=postgresql://x@127.0.0.1:1/x"},
       2,
       "fleetmark-coordinator: --store=memory: store: the memory store takes no database_uri or read_database_uri"},
      {{coordinator, "--store=memory", "--listen_address=0.0.0.0:0", "--allow_insecure_remote"},
       2,
       "fleetmark-coordinator: --store=memory: listen_address \"0.0.0.0:0\": the memory store serves loopback"},
      {{coordinator, "--store=memory", "--http_address=127.0.0.1:0"},
       2,
       "fleetmark-coordinator: --http_address: the web view reads PostgreSQL; it is off with --store=memory"},
      {{agent, "--tls_ca=x"}, 2, "unknown flag --tls_ca=x"},  // one name across binaries: --tls_ca_file
      // Values out of range: one line naming the flag and the range (not an internal field).
      {{agent, "--reconnect_initial_delay=-1s"},
       2,
       "fleetmark-agent: --reconnect_initial_delay: 0 < delay <= --reconnect_max_delay (30s), got -1s"},
      // A bad cap is blamed on the cap, not on --reconnect_initial_delay (left at its default).
      {{agent, "--reconnect_max_delay=0s"}, 2, "fleetmark-agent: --reconnect_max_delay: 0 < delay <= 1h, got 0"},
      {{agent, "--reconnect_max_delay=-1s"}, 2, "fleetmark-agent: --reconnect_max_delay: 0 < delay <= 1h, got -1s"},
      {{agent, "--reconnect_max_delay=2h"}, 2, "fleetmark-agent: --reconnect_max_delay: 0 < delay <= 1h, got 2h"},
      {{agent, "--reconnect_max_delay=200ms"},
       2,
       "fleetmark-agent: --reconnect_initial_delay: 0 < delay <= --reconnect_max_delay (200ms), got 500ms"},
      {{agent, "--welcome_timeout=1ms", "--coordinator=127.0.0.1:1", "--token_file=/nonexistent"},
       2,
       "fleetmark-agent: --welcome_timeout: 10ms <= welcome_timeout <= 1h, got 1ms"},
      {{agent, "--labels=a", "--coordinator=127.0.0.1:1"}, 2, "fleetmark-agent: --labels[0]"},
      // An empty --name is refused, not replaced by the host name (the default only when not given).
      {{agent, "--name=", "--coordinator=127.0.0.1:1"},
       2,
       "fleetmark-agent: --name: 1 to 64 characters of [A-Za-z0-9._-], got \"\""},
      {{agent, "--name", "", "--coordinator=127.0.0.1:1"},
       2,
       "fleetmark-agent: --name: 1 to 64 characters of [A-Za-z0-9._-], got \"\""},
      {{agent, "--version"}, 0, "fleetmark-agent " FLEETMARK_ENGINE_VERSION " (commit "},
      {{coordinator, "--version"}, 0, "fleetmark-coordinator " FLEETMARK_ENGINE_VERSION " (commit "},
      {{agent, "--help"}, 0, "  --tls_ca_file (default \"\")"},
      {{coordinator, "--helpfull"}, 0, "  --database_uri (default \"\")"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::unique_ptr<Subprocess>> process = Subprocess::Start(c.argv, dir + "/flags.log");
    ASSERT_TRUE(process.ok()) << process.status();
    absl::StatusOr<ExitInfo> exit = (*process)->Wait(absl::Seconds(30));
    ASSERT_TRUE(exit.ok()) << exit.status();
    const std::string log = (*process)->Log();
    EXPECT_TRUE(exit->exited && exit->exit_code == c.exit_code) << c.argv[1] << ": " << log;
    EXPECT_THAT(log, HasSubstr(c.says)) << c.argv[0] << " " << c.argv[1];
    if (c.argv[1] == "--help" || c.argv[1] == "--helpfull") {
      EXPECT_THAT(log, Not(HasSubstr(".cc"))) << log;
      EXPECT_THAT(log, Not(HasSubstr("test_"))) << log;
    }
    if (c.argv[1] == "--version") EXPECT_THAT(log, HasSubstr(" build)"));
  }
  // A runtime failure is a log line with an RFC 3339 UTC time and a level.
  absl::StatusOr<std::unique_ptr<Subprocess>> process =
      Subprocess::Start({coordinator, "--database_uri=postgresql://x@127.0.0.1:1/x"}, dir + "/db.log");
  ASSERT_TRUE(process.ok()) << process.status();
  absl::StatusOr<ExitInfo> exit = (*process)->Wait(absl::Seconds(60));
  ASSERT_TRUE(exit.ok()) << exit.status();
  EXPECT_TRUE(exit->exited && exit->exit_code == 1) << (*process)->Log();
  EXPECT_THAT((*process)->Log(),
              ::testing::ContainsRegex("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z ERROR "));
  RemoveTree(dir);
}

TEST_F(StackTest, StatusAndDownSayWhatRunsAndWhatStopped) {
  ASSERT_NO_FATAL_FAILURE(Up());
  const Outcome status = Stack("status");
  EXPECT_EQ(status.exit_code, 0) << status.output;
  EXPECT_THAT(status.output, HasSubstr(absl::StrCat("coordinator: running (pid ", Pid("coordinator"))));
  EXPECT_THAT(status.output, HasSubstr(absl::StrCat("agent: running (pid ", Pid("agent"), ")")));
  EXPECT_THAT(status.output, HasSubstr(absl::StrCat("postgresql: running (postgresql://")));

  const pid_t agent = Pid("agent"), coordinator = Pid("coordinator");
  const Outcome down = Stack("down");
  EXPECT_EQ(down.exit_code, 0) << down.output;
  EXPECT_THAT(down.output, HasSubstr(absl::StrCat("agent: stopped (pid ", agent, ")")));
  EXPECT_THAT(down.output, HasSubstr(absl::StrCat("coordinator: stopped (pid ", coordinator, ")")));
  EXPECT_THAT(down.output, HasSubstr("postgresql: stopped"));

  const Outcome stopped = Stack("status");
  EXPECT_EQ(stopped.exit_code, 3) << stopped.output;
  for (const char* part : {"coordinator: stopped", "agent: stopped", "postgresql: stopped"}) {
    EXPECT_THAT(stopped.output, HasSubstr(part));
  }
  const Outcome again = Stack("down");
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_THAT(again.output, HasSubstr("agent: not running"));
  EXPECT_THAT(again.output, HasSubstr("postgresql: not running"));
}

TEST_F(StackTest, KilledOrReusedPidIsStoppedAndUpRestartsIt) {
  ASSERT_NO_FATAL_FAILURE(Up());
  const pid_t coordinator = Pid("coordinator");
  ASSERT_EQ(kill(coordinator, SIGKILL), 0);
  // Right away: the process may not be reaped yet (a zombie still answers kill -0).
  const Outcome killed = Stack("status");
  EXPECT_EQ(killed.exit_code, 3) << killed.output;
  EXPECT_THAT(killed.output, HasSubstr("coordinator: stopped"));
  EXPECT_THAT(killed.output, HasSubstr("agent: running"));

  // A pid file naming a live process that is not ours (here: this test).
  { std::ofstream(dir_ + "/coordinator.pid") << getpid() << "\n"; }
  const Outcome reused = Stack("status");
  EXPECT_EQ(reused.exit_code, 3) << reused.output;
  EXPECT_THAT(reused.output, HasSubstr("coordinator: stopped"));

  ASSERT_NO_FATAL_FAILURE(Up());
  EXPECT_NE(Pid("coordinator"), getpid());
  EXPECT_THAT(CmdLine(Pid("coordinator")), HasSubstr("fleetmark-coordinator"));
  EXPECT_EQ(Stack("status").exit_code, 0);
}

TEST_F(StackTest, PostgresRestartKeepsItsPortOrTheCoordinatorIsRestarted) {
  ASSERT_NO_FATAL_FAILURE(Up());
  const std::string port = PgPort();
  const pid_t coordinator = Pid("coordinator");

  // PostgreSQL stopped under a running coordinator: `up` brings it back on its port.
  ASSERT_TRUE(RunCommand({kPg, "stop", dir_ + "/pg"}, absl::Seconds(60)).ok());
  EXPECT_EQ(Stack("status").exit_code, 3);
  ASSERT_NO_FATAL_FAILURE(Up());
  EXPECT_EQ(PgPort(), port);
  EXPECT_EQ(Pid("coordinator"), coordinator);

  // Its port taken meanwhile: PostgreSQL moves, and `up` restarts the coordinator on
  // the new URI instead of leaving it on the old one.
  ASSERT_TRUE(RunCommand({kPg, "stop", dir_ + "/pg"}, absl::Seconds(60)).ok());
  const int blocker = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(blocker, 0);
  const int one = 1;
  setsockopt(blocker, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int port_number = 0;
  ASSERT_TRUE(absl::SimpleAtoi(port, &port_number));
  address.sin_port = htons(static_cast<uint16_t>(port_number));
  ASSERT_EQ(bind(blocker, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0) << strerror(errno);
  ASSERT_EQ(listen(blocker, 1), 0);
  const Outcome up = Stack("up");
  close(blocker);
  ASSERT_EQ(up.exit_code, 0) << up.output;
  const std::string new_port = PgPort();
  EXPECT_NE(new_port, port);
  EXPECT_THAT(up.output, HasSubstr(absl::StrCat("port ", port)));
  EXPECT_THAT(up.output, HasSubstr("restarting the coordinator"));
  EXPECT_NE(Pid("coordinator"), coordinator);
  EXPECT_THAT(CmdLine(Pid("coordinator")),
              HasSubstr(absl::StrCat("--database_uri=postgresql://postgres@127.0.0.1:", new_port, "/")));
  const Outcome status = Stack("status");
  EXPECT_EQ(status.exit_code, 0) << status.output;
}

TEST_F(StackTest, SecondAgentOnTheStacksSpoolDirIsRefused) {
  ASSERT_NO_FATAL_FAILURE(Up());
  const std::string credential = Slurp(dir_ + "/agent/credential");
  ASSERT_FALSE(credential.empty());
  const Outcome second =
      Run({FLEETMARK_AGENT_BIN, absl::StrCat("--coordinator=127.0.0.1:", Trimmed(dir_ + "/coordinator.port")),
           absl::StrCat("--token_file=", dir_, "/enrollment_token"), "--name=box6",
           absl::StrCat("--spool_dir=", dir_, "/agent")});
  EXPECT_EQ(second.exit_code, 2) << second.output;
  EXPECT_THAT(second.output, HasSubstr(absl::StrCat("spool dir ", dir_,
                                                    "/agent is in use by another "
                                                    "fleetmark-agent (pid ",
                                                    Pid("agent"), ")")));
  EXPECT_EQ(Slurp(dir_ + "/agent/credential"), credential);  // not overwritten
}

TEST_F(StackTest, RevokedSeedTokenNamesTheRecoveryWhichWorks) {
  ASSERT_NO_FATAL_FAILURE(Up());
  std::vector<std::string> list = {kCli, "tokens", "list"};
  for (const std::string& flag : CliFlags()) list.push_back(flag);
  absl::StatusOr<std::string> tokens = RunCommand(list);
  ASSERT_TRUE(tokens.ok()) << tokens.status();
  std::string seed;
  for (absl::string_view line : absl::StrSplit(*tokens, '\n')) {
    if (absl::StartsWith(line, "seed-")) seed = std::string(line.substr(0, line.find(' ')));
  }
  ASSERT_FALSE(seed.empty()) << *tokens;
  std::vector<std::string> revoke = {kCli, "tokens", "revoke", seed};
  for (const std::string& flag : CliFlags()) revoke.push_back(flag);
  ASSERT_TRUE(RunCommand(revoke).ok());
  ASSERT_EQ(Stack("down").exit_code, 0);

  const Outcome refused = Stack("up");
  EXPECT_EQ(refused.exit_code, 1) << refused.output;
  EXPECT_THAT(refused.output,
              HasSubstr(absl::StrCat("the enrollment token in ", dir_, "/enrollment_token is revoked")));
  // The printed steps, run as printed (the indented lines).
  std::string steps;
  for (absl::string_view line : absl::StrSplit(refused.output, '\n')) {
    if (absl::ConsumePrefix(&line, "  ")) absl::StrAppend(&steps, line, "\n");
  }
  ASSERT_THAT(steps, HasSubstr("tokens create"));
  ASSERT_THAT(steps, HasSubstr("agents remove"));  // a name belongs to its credential
  ASSERT_THAT(steps, HasSubstr("deploy/stack.sh up"));
  const Outcome recovered = Run({"/bin/bash", "-euc", absl::StrCat("cd ", FLEETMARK_SOURCE_DIR, "\n", steps)});
  EXPECT_EQ(recovered.exit_code, 0) << steps << recovered.output;
  EXPECT_EQ(Stack("status").exit_code, 0);
  // The new token survives a full restart (the coordinator seeds the same file again).
  ASSERT_EQ(Stack("down").exit_code, 0);
  ASSERT_NO_FATAL_FAILURE(Up());
}

}  // namespace
}  // namespace fleetmark::testing
