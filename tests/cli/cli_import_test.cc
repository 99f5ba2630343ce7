// `fleetmark results import FILE...` through the real `fleetmark` binary, a real
// coordinator and PostgreSQL (issue 34, item 1): a file written by `fleetmark run
// --format json --out` is stored once, in a run marked imported in `runs list` and
// `runs show`, under a device record `agents list` shows as imported; importing it again
// (or the coordinator's own export of it) stores nothing ("0 new, N already stored"); a
// file of an unknown schema version is refused with one error, exit 2, nothing stored;
// a file of a machine with an agent goes to that agent.
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "engine/report/json.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cli/cli_store_fixture.h"

namespace {

using namespace fleetmark_cli_test;  // NOLINT: the fixture of this test folder
using ::testing::HasSubstr;
using ::testing::Not;
namespace v1 = fleetmark::v1;

class CliImportTest : public CliStorePgTest {
 protected:
  // A results file of kTinyPlan measured here (4 cases); its path.
  fs::path LocalFile(const std::string& name) {
    const fs::path plan = Write("tiny.txtpb", kTinyPlan);
    const fs::path out = dir_ / name;
    CliResult r = Cli("run " + plan.string() + " --format=json --quiet --out " + out.string());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return out;
  }
};

TEST_F(CliImportTest, AFileIsStoredOnceMarkedImportedAndAnUnknownSchemaIsRefused) {
  const fs::path file = LocalFile("laptop.json");
  absl::StatusOr<v1::ResultsDocument> document = fleetmark::report::ParseResultsJson(ReadFile(file));
  ASSERT_TRUE(document.ok()) << document.status();
  ASSERT_EQ(document->devices_size(), 1);
  const std::string device = document->devices(0).agent();

  // A newer schema: one error, exit 2, nothing stored.
  std::string text = ReadFile(file);
  ASSERT_THAT(text, HasSubstr("\"schema_version\": 1,"));
  const fs::path newer =
      Write("newer.json", absl::StrReplaceAll(text, {{"\"schema_version\": 1,", "\"schema_version\": 7,"}}));
  CliResult r = Fleet("results import " + newer.string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("schema_version 7 is newer than this fleetmark reads"));
  EXPECT_TRUE(r.out.empty()) << r.out;
  // With a good file before it on the command line: still nothing stored.
  r = Fleet("results import " + file.string() + " " + newer.string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(Sql("SELECT count(*) FROM runs"), "0");
  EXPECT_EQ(Sql("SELECT count(*) FROM case_results"), "0");

  r = Fleet("results import " + file.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(file.string() + ": 4 new, 0 already stored (run "));
  EXPECT_THAT(r.out,
              HasSubstr(absl::StrCat("  device ", device, ": 4 new under imported device ", device, "-imported")));
  const std::string run_id = Sql("SELECT run_id::text FROM runs");
  ASSERT_FALSE(run_id.empty());
  EXPECT_EQ(Sql("SELECT count(*) FROM case_results"), "4");

  r = Fleet("results import " + file.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(file.string() + ": 0 new, 4 already stored\n"));
  EXPECT_EQ(Sql("SELECT count(*) FROM runs"), "1");

  r = Fleet("runs list");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("done (imported)"));
  r = Fleet("runs show " + run_id);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(absl::StrCat("run ", run_id, "  plan tiny  done  imported  4 results")));
  r = Fleet("agents list");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(device + "-imported"));
  EXPECT_THAT(r.out, HasSubstr("imported"));

  // The coordinator's own export of the run, imported back: nothing new.
  const fs::path exported = dir_ / "exported.json";
  r = Fleet("export " + run_id + " --format json --out " + exported.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Fleet("results import " + exported.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(": 0 new, 4 already stored"));
  EXPECT_EQ(Sql("SELECT count(*) FROM runs"), "1");
}

TEST_F(CliImportTest, AFileOfAMachineWithAnAgentGoesToThatAgent) {
  const fs::path file = LocalFile("box.json");
  absl::StatusOr<v1::ResultsDocument> document = fleetmark::report::ParseResultsJson(ReadFile(file));
  ASSERT_TRUE(document.ok()) << document.status();
  ASSERT_EQ(document->devices_size(), 1);
  ASSERT_FALSE(document->devices(0).host().hostname().empty()) << "this machine has no host name";
  Register("bench-box", document->devices(0).host());
  CliResult r = Fleet("results import " + file.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("4 new under agent bench-box (an agent of that machine)"));
  r = Fleet("agents list");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("-imported")));
  EXPECT_EQ(Sql("SELECT count(*) FROM agents WHERE imported"), "0");
}

TEST_F(CliImportTest, UsageAndHelp) {
  CliResult r = Fleet("results import");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("results import takes one or more results files"));
  r = Fleet("results import " + (dir_ / "missing.json").string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  r = Cli("--help");
  EXPECT_THAT(r.out + r.err, HasSubstr("results import"));
}

}  // namespace
