// The one command-line parser of the three binaries (engine/common/flag_parser.h).
#include "engine/common/flag_parser.h"

#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/time/time.h"
#include "engine/common/version.h"
#include "gtest/gtest.h"

ABSL_FLAG(std::string, fp_name, "dflt", "a string flag");
ABSL_FLAG(int, fp_count, 3, "an int flag");
ABSL_FLAG(int, fp_limit, 20, "an int flag with a range (1..1000)");
ABSL_FLAG(bool, fp_on, false, "a bool flag");
ABSL_FLAG(absl::Duration, fp_delay, absl::Seconds(1), "a duration flag");
ABSL_FLAG(int, test_fp_hook, 0, "a test hook: never in help");

namespace fleetmark {
namespace {

constexpr char kFiles[] = "flag_parser_test.cc";

absl::StatusOr<ParsedFlags> Parse(std::vector<std::string> args) {
  args.insert(args.begin(), "prog");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return ParseFlags(static_cast<int>(argv.size()), argv.data(), kFiles);
}

void Reset() {
  absl::SetFlag(&FLAGS_fp_name, "dflt");
  absl::SetFlag(&FLAGS_fp_count, 3);
  absl::SetFlag(&FLAGS_fp_on, false);
}

TEST(FlagParserTest, SetsFlagsInEveryForm) {
  Reset();
  auto parsed = Parse({"--fp_name=a", "-fp_count", "7", "--fp_on", "pos", "--", "--not_a_flag"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(absl::GetFlag(FLAGS_fp_name), "a");
  EXPECT_EQ(absl::GetFlag(FLAGS_fp_count), 7);
  EXPECT_TRUE(absl::GetFlag(FLAGS_fp_on));
  EXPECT_EQ(parsed->positional, (std::vector<std::string>{"pos", "--not_a_flag"}));
  EXPECT_EQ(parsed->flags_set, (std::vector<std::string>{"fp_name", "fp_count", "fp_on"}));
  EXPECT_FALSE(parsed->help);
  EXPECT_FALSE(parsed->version);
  ASSERT_TRUE(Parse({"--nofp_on"}).ok());
  EXPECT_FALSE(absl::GetFlag(FLAGS_fp_on));
  auto help = Parse({"--helpfull", "--version"});
  ASSERT_TRUE(help.ok());
  EXPECT_TRUE(help->help);
  EXPECT_TRUE(help->version);
}

TEST(FlagParserTest, BadInputNamesTheFlag) {
  Reset();
  EXPECT_EQ(Parse({"--fp_bogus=1"}).status().message(), "unknown flag --fp_bogus=1");
  // A typo gets the closest flags (suggest.h); test hooks are never suggested.
  EXPECT_EQ(std::string(Parse({"--fp_cont=1"}).status().message()),
            "unknown flag --fp_cont=1 (did you mean \"--fp_count\" or \"--fp_on\"?)");
  EXPECT_EQ(std::string(Parse({"--fp_limt"}).status().message()),
            "unknown flag --fp_limt (did you mean \"--fp_limit\"?)");
  EXPECT_EQ(std::string(Parse({"-fp_nmae", "x"}).status().message()),
            "unknown flag -fp_nmae (did you mean \"--fp_name\"?)");
  EXPECT_EQ(std::string(Parse({"--test_fp_hok"}).status().message()), "unknown flag --test_fp_hok");
  // Flags of other files (Abseil's, gRPC's, the test's own gtest flags) are not ours.
  EXPECT_EQ(Parse({"--flagfile=x"}).status().message(), "unknown flag --flagfile=x");
  EXPECT_EQ(Parse({"--fp_count"}).status().message(), "flag --fp_count needs a value");
  EXPECT_EQ(Parse({"--fp_name=a", "--fp_name", "b"}).status().message(), "--fp_name is given twice; give it once");
  const absl::Status bad_int = Parse({"--fp_count=x"}).status();
  EXPECT_EQ(bad_int.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad_int.message(), "--fp_count: not a whole number, got \"x\"");
  // A number past the type's range is named as such (Abseil: "Illegal value ...").
  EXPECT_EQ(Parse({"--fp_count=99999999999"}).status().message(),
            "--fp_count: a number out of range, got \"99999999999\"");
  // ... and by the range its help names, in the one range form every command uses
  // (it said "1..1000, got \"99999999999\"" here and "1 <= limit <= 1000, got 0" in
  // the command), and a value inside the type but outside that range is refused here too.
  EXPECT_EQ(Parse({"--fp_limit=99999999999"}).status().message(), "--fp_limit: 1 <= fp_limit <= 1000, got 99999999999");
  EXPECT_EQ(Parse({"--fp_limit=0"}).status().message(), "--fp_limit: 1 <= fp_limit <= 1000, got 0");
  EXPECT_EQ(Parse({"--fp_limit", "-3"}).status().message(), "--fp_limit: 1 <= fp_limit <= 1000, got -3");
  EXPECT_TRUE(Parse({"--fp_limit=1000"}).ok());
  EXPECT_TRUE(Parse({"--fp_count=-5"}).ok());  // no range in its help: the command's own check
  // A duration without a unit says so, naming the flag, the units and an example.
  EXPECT_EQ(Parse({"--fp_delay", "5"}).status().message(),
            "--fp_delay: a duration needs a unit (h, m, s, ms, us, ns; e.g. --fp_delay=30m or --fp_delay=1h30m), "
            "got \"5\"");
  EXPECT_EQ(Parse({"--fp_delay=soon"}).status().message(),
            "--fp_delay: not a duration (h, m, s, ms, us, ns; e.g. --fp_delay=30m or --fp_delay=1h30m), got \"soon\"");
  // A word for a ranged integer names the range; a bool's bad value what it takes
  // (Abseil: "Illegal value 'maybe' specified for flag 'fp_on'").
  EXPECT_EQ(Parse({"--fp_limit=many"}).status().message(),
            "--fp_limit: a whole number, 1 <= fp_limit <= 1000, got \"many\"");
  EXPECT_EQ(Parse({"--fp_on=maybe"}).status().message(),
            "--fp_on: true or false (or --fp_on / --nofp_on), got \"maybe\"");
  EXPECT_FALSE(Parse({"--nofp_count"}).ok());    // --no only for bool flags
  EXPECT_EQ(absl::GetFlag(FLAGS_fp_name), "a");  // the first, valid value was set
}

TEST(FlagParserTest, HelpListsOurFlagsWithoutPathsOrTestHooks) {
  const std::vector<std::string> names = FlagNames(kFiles);
  EXPECT_EQ(names, (std::vector<std::string>{"fp_count", "fp_delay", "fp_limit", "fp_name", "fp_on"}));
  const std::string help = FlagsHelp(names);
  EXPECT_NE(help.find("  --fp_count (default \"3\")\n      an int flag\n"), std::string::npos) << help;
  EXPECT_NE(help.find("  --fp_on\n      a bool flag\n"), std::string::npos) << help;
  EXPECT_EQ(help.find(".cc"), std::string::npos) << help;
  EXPECT_EQ(help.find("test_"), std::string::npos) << help;
}

TEST(VersionTest, NamesVersionCommitAndBuildType) {
  const std::string line = VersionLine("fleetmark-x");
  EXPECT_EQ(line.rfind(std::string("fleetmark-x ") + FLEETMARK_ENGINE_VERSION + " (commit ", 0), 0u) << line;
  EXPECT_NE(line.find(std::string(BuildCommit())), std::string::npos);
  EXPECT_FALSE(BuildCommit().empty());
  EXPECT_FALSE(BuildType().empty());
  EXPECT_EQ(line.substr(line.size() - 7), " build)") << line;
}

}  // namespace
}  // namespace fleetmark
