// `fleetmark` on hostile or unusual input, through the real binary: huge or pathological
// arguments and plan files, signals, unwritable output. Each must end in one clear error
// line and a documented exit code, never a crash, a hang or a silent success.
#include <sys/stat.h>

#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cli/cli_fixture.h"

namespace {

using namespace fleetmark_cli_test;  // NOLINT: the fixture of this test folder
using ::testing::HasSubstr;
using ::testing::Not;

TEST_F(CliTest, PathologicalFiltersAreUsageErrorsNotCrashes) {
  const fs::path plan = Write("tiny.txtpb", kTinyPlan);
  for (const std::string& filter :
       {std::string(100000, 'a'), std::string(20000, '(') + "a" + std::string(20000, ')')}) {
    CliResult r = Cli("run " + plan.string() + " --filter '" + filter + "'");
    EXPECT_EQ(r.signal, 0);
    EXPECT_EQ(r.exit_code, 2) << r.err.substr(0, 200);
    EXPECT_THAT(r.err, HasSubstr("--filter"));
    EXPECT_LT(r.err.size(), 400u);
    EXPECT_TRUE(r.out.empty());
  }
}

TEST_F(CliTest, PlanPathsThatAreNotRegularFilesAreRefusedAtOnce) {
  ASSERT_EQ(::mkfifo((dir_ / "fifo").c_str(), 0600), 0);
  for (const std::string& path : {std::string("/dev/zero"), std::string("/dev/urandom"),
                                  dir_.string(), (dir_ / "fifo").string()}) {
    for (const std::string& command : {"plan validate ", "run "}) {
      CliResult r = Cli(command + path);
      EXPECT_EQ(r.exit_code, 2) << command << path << ": " << r.err;
      EXPECT_THAT(r.err, HasSubstr(path + ": ")) << command << path;
    }
  }
  CliResult r = Cli("plan validate " + dir_.string());
  EXPECT_THAT(r.err, HasSubstr(dir_.string() + ": is a directory"));
  const fs::path big = dir_ / "big.txtpb";
  {
    std::ofstream out(big);
    for (int i = 0; i < 17; ++i) out << "# " << std::string(1 << 20, 'x') << "\n";
  }
  r = Cli("plan validate " + big.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("at most 16777216"));
}

TEST_F(CliTest, JsonPlansFromStdinOrWithoutExtension) {
  const std::string json =
      R"({"name": "j", "matrix": [{"strategies": [{"name": "direct"}], "workloads": ["arithmetic"], "batch": {}}]})";
  const fs::path plain = Write("plan", json);
  CliResult r = Cli("plan validate " + plain.string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("valid plan \"j\""));
  r = Cli("plan validate -", "<" + plain.string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("valid plan \"j\""));
  r = Cli("plan validate /dev/stdin", "<" + plain.string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = Cli("plan validate " + Write("dup.json", R"({"name": "a", "name": "b"})").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("duplicate key"));
}

}  // namespace
