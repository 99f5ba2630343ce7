// `fleetmark results prune` through the real `fleetmark` binary, a real coordinator and
// PostgreSQL: bad durations, the refusal naming a run never exported, --dry_run, the
// export that records the run, the prune that drops its month, and exit codes.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cli/cli_store_fixture.h"

namespace {

using namespace fleetmark_cli_test;  // NOLINT: the fixture of this test folder
using ::testing::HasSubstr;
using ::testing::Not;
namespace store = fleetmark::store;

class CliPruneTest : public CliStorePgTest {
 protected:
  bool OldMonthExists() { return Sql("SELECT to_regclass('case_results_y2024m01')::text") == "case_results_y2024m01"; }

  // A finished run from January 2024 with one result; its id.
  std::string OldRun() {
    fleetmark::v1::HostInfo host;
    host.set_arch("x86_64");
    const std::string agent = Register("board", host);
    std::vector<store::ClaimedJob> jobs;
    const std::string run_id = CreateClaimedRun("nightly", {agent}, 1, &jobs);
    EXPECT_EQ(jobs.size(), 1u);
    if (jobs.size() != 1) return run_id;
    Sql(
        absl::StrCat("SELECT fleetmark_ensure_result_partitions('2024-01-15', '2024-01-15');"
                     "UPDATE runs SET created_at = '2024-01-15 08:00+00' WHERE run_id = '",
                     run_id, "'"));
    std::vector<fleetmark::v1::CaseResult> results = {BatchResult(1, jobs[0], "direct", 1000)};
    Insert(results, {agent});
    EXPECT_TRUE(store_->FinishJob(jobs[0].assignment.job_id(), agent, store::JobOutcome{.ok = true}).ok());
    Sql(absl::StrCat("UPDATE runs SET status = 'done' WHERE run_id = '", run_id, "'"));
    return run_id;
  }
};

TEST_F(CliPruneTest, BadDurationsAreUsageErrors) {
  CliResult r = Fleet("results prune");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--older_than DURATION is required"));
  r = Fleet("results prune --older_than 3x");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--older_than: a duration such as 400d, 8w or 720h (1h to 36500d), got \"3x\""));
  r = Fleet("results prune --older_than 30m");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--older_than: 1h to 36500d, got 30m"));
  r = Fleet("results prune --older_than 0d");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  r = Fleet("results prune extra --older_than 10d");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("results prune takes no arguments"));
}

TEST_F(CliPruneTest, RefusesUnexportedRunThenDropsItsMonthOnceExported) {
  const std::string run_id = OldRun();
  ASSERT_FALSE(run_id.empty());
  ASSERT_TRUE(OldMonthExists());

  CliResult r = Fleet("results prune --older_than 365d");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("1 runs in the partitions to drop were never exported"));
  EXPECT_THAT(r.err, HasSubstr(run_id));
  EXPECT_TRUE(OldMonthExists());

  r = Fleet("results prune --older_than 365d --force --dry_run");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("would drop 2024-01 (case_results_y2024m01, "));
  EXPECT_THAT(r.out, HasSubstr(run_id));
  EXPECT_THAT(r.out, HasSubstr("dry run: nothing was changed"));
  EXPECT_TRUE(OldMonthExists());

  // An export of one agent is not the run's export; the whole run's is.
  r = Fleet("export " + run_id + " --format json --agents board");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Sql("SELECT count(*) FROM runs WHERE exported_at IS NOT NULL"), "0");
  r = Fleet("export " + run_id + " --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Sql("SELECT count(*) FROM runs WHERE exported_at IS NOT NULL"), "1");

  r = Fleet("results prune --older_than 365d");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("dropped 2024-01 (case_results_y2024m01, "));
  EXPECT_THAT(r.out, HasSubstr("dropped 1 runs created before 2024-02-01"));
  EXPECT_THAT(r.out, HasSubstr(run_id));
  EXPECT_THAT(r.out, Not(HasSubstr("dry run")));
  EXPECT_FALSE(OldMonthExists());
  EXPECT_EQ(Sql("SELECT count(*) FROM runs"), "0");
  EXPECT_EQ(Sql("SELECT count(*) FROM case_results"), "0");

  r = Fleet("results prune --older_than 365d");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("nothing to prune"));
  r = Fleet("runs show " + run_id);
  EXPECT_NE(r.exit_code, 0);
}

TEST_F(CliPruneTest, HelpListsTheCommand) {
  CliResult r = Cli("--help");
  EXPECT_THAT(r.out + r.err, HasSubstr("results prune"));
}

}  // namespace
