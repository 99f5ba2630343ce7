// `fleetmark` on hostile or unusual input, through the real binary: huge or pathological
// arguments and plan files, signals, unwritable output. Each must end in one clear error
// line and a documented exit code, never a crash, a hang or a silent success.
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

}  // namespace
