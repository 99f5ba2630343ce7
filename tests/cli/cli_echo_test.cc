// What `fleetmark` echoes of the user's input in its errors, through the real binary:
// control characters escaped (no raw ESC reaches the terminal), long values cut, and
// agent, schedule and token names checked against the name rule before any call.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cli/cli_fixture.h"

namespace {

using namespace fleetmark_cli_test;  // NOLINT: the fixture of this test folder
using ::testing::HasSubstr;
using ::testing::Not;

// A shell word that expands to ESC [31m followed by `rest` (sh's printf, not $'...').
std::string Esc(const std::string& rest = "") { return "\"$(printf '\\033[31m" + rest + "')\""; }

constexpr char kRun[] = "00000000-0000-4000-8000-000000000000";
constexpr char kNoCoordinator[] = " --coordinator 127.0.0.1:1";

TEST_F(CliTest, ErrorsEscapeControlCharactersInWhatTheyEcho) {
  const std::string plan = Write("plan.txtpb", "name: \"p\"\n").string();
  const std::string run = kRun;
  for (const std::string& args : std::vector<std::string>{
           "export " + run + " --format " + Esc("x") + kNoCoordinator,
           "run " + plan + " --format " + Esc("x"),
           "changes list --format " + Esc() + kNoCoordinator,
           "changes list --since " + Esc() + kNoCoordinator,
           "compare " + run + " --agents a,b --min_margin " + Esc() + kNoCoordinator,
           "runs show " + run + " --wide=" + Esc() + kNoCoordinator,
           "submit " + plan + " --select all --quick=" + Esc() + kNoCoordinator,
           "--" + Esc(),
           "submit " + Esc(".txtpb") + " --select all" + kNoCoordinator,
           "run " + Esc(),
           "export " + run + " --format csv --out \"$(printf '/tmp/\\033[31m/x')\"" + kNoCoordinator,
       }) {
    const CliResult r = Cli(args);
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err;
    EXPECT_THAT(r.err, Not(HasSubstr("\x1b"))) << args;
    EXPECT_THAT(r.err, HasSubstr("\\x1b[31m")) << args << ": " << r.err;
  }
}

TEST_F(CliTest, ErrorsCutAHugeValueTheyEcho) {
  const std::string big = "\"$(cat '" + Write("big", std::string(100000, 'a')).string() + "')\"";
  const std::string run = kRun;
  for (const std::string& args : std::vector<std::string>{
           "compare " + run + " --agents " + big + kNoCoordinator,
           "agents list --admin_token_file " + big + kNoCoordinator,
           "recommend --profile " + big + kNoCoordinator,
       }) {
    const CliResult r = Cli(args);
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err.substr(0, 300);
    EXPECT_LT(r.err.size(), 1000u) << args << ": " << r.err.substr(0, 300);
    EXPECT_THAT(r.err, HasSubstr("aaa...")) << args;
  }
}

TEST_F(CliTest, NamesAreCheckedAgainstTheNameRuleBeforeAnyCall) {
  const std::string big = "\"$(cat '" + Write("big", std::string(100000, 'a')).string() + "')\"";
  const std::string run = kRun;
  for (const auto& [args, what] : std::vector<std::pair<std::string, std::string>>{
           {"agents remove " + big, "NAME"},
           {"agents release " + big, "NAME"},
           {"tokens revoke " + big, "TOKEN_ID"},
           {"schedules delete " + big, "NAME"},
           {"schedules pause " + big, "NAME"},
           {"export " + run + " --format csv --agents " + big, "--agents"},
           {"map " + run + " --agent " + big, "--agent"},
           {"agents remove ''", "NAME"},
           {"tokens revoke ''", "TOKEN_ID"},
       }) {
    const CliResult r = Cli(args + kNoCoordinator);
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err.substr(0, 300);
    EXPECT_THAT(r.err, HasSubstr(what + ": 1 to 64 characters of [A-Za-z0-9._-]"))
        << args << ": " << r.err.substr(0, 300);
    EXPECT_LT(r.err.size(), 1000u) << args;
    EXPECT_THAT(r.err, Not(HasSubstr("metadata"))) << args;
  }
}

}  // namespace
