// `fleetmark` end to end: bad input exits 2 with one clear message naming the field;
// a tiny plan runs in every output format and each parses back.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "tests/cli/cli_fixture.h"
#include "engine/report/csv.h"
#include "engine/report/json.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace {

using namespace fleetmark_cli_test;  // NOLINT: the fixture of this test folder
using ::testing::HasSubstr;
using ::testing::Not;

TEST_F(CliTest, UsageAndHelp) {
  CliResult r = Cli("");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("commands:"));

  r = Cli("--help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* word : {"run", "plan validate", "list", "--format", "--out", "--filter",
                           "--quick"}) {
    EXPECT_THAT(r.out, HasSubstr(word));
  }
  r = Cli("plan");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("needs a subcommand"));
  EXPECT_THAT(r.err, HasSubstr("fleetmark plan validate PLAN"));

  r = Cli("help run");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("fleetmark run PLAN"));
}

TEST_F(CliTest, UnknownCommandOrFlagExits2) {
  CliResult r = Cli("frobnicate");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown command \"frobnicate\""));

  const fs::path plan = Write("tiny.txtpb", kTinyPlan);
  r = Cli("run " + plan.string() + " --no_such_flag=1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown flag --no_such_flag=1"));

  r = Cli("run " + plan.string() + " --format=xml");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--format"));
  EXPECT_THAT(r.err, HasSubstr("xml"));
  EXPECT_TRUE(r.out.empty());
}

TEST_F(CliTest, BadPlansExit2NamingTheField) {
  CliResult r = Cli("plan validate " + (dir_ / "missing.txtpb").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("missing.txtpb"));
  EXPECT_THAT(r.err, HasSubstr("No such file"));

  fs::path p = Write("syntax.txtpb", "name: \"x\"\nmatrix {\n  strategies { nme: \"direct\" }\n}\n");
  r = Cli("plan validate " + p.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("syntax.txtpb:3:"));
  EXPECT_THAT(r.err, HasSubstr("nme"));

  p = Write("threads.txtpb",
            "matrix {\n  strategies { name: \"fixed_pool\" threads: 20000 }\n"
            "  workloads: \"arithmetic\"\n  batch {}\n}\n");
  r = Cli("run " + p.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("threads.txtpb:2:35: plan.matrix[0].strategies[0].threads: "
                               "0 <= threads <= 10000, got 20000"));
  EXPECT_TRUE(r.out.empty());  // nothing ran

  p = Write("name.txtpb", "matrix { strategies { name: \"nope\" } workloads: \"arithmetic\" batch {} }");
  r = Cli("plan validate " + p.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("plan.matrix[0].strategies[0].name: one of direct"));

  p = Write("tasks.json",
            R"({"matrix": [{"strategies": [{"name": "direct"}], "workloads": ["network"],
                "batch": {"tasks": 2000000}}]})");
  r = Cli("plan validate " + p.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("plan.matrix[0].batch.tasks: 0 <= tasks <= 1000000, got 2000000"));

  p = Write("negative.txtpb", std::string(kTinyPlan) + "quick { warmup_seconds: -2 }\n");
  r = Cli("run --quick " + p.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("plan.quick.warmup_seconds"));
  EXPECT_THAT(r.err, HasSubstr("got -2"));

  r = Cli("run " + Write("ok.txtpb", kTinyPlan).string() + " --filter='(bad'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--filter"));
}

TEST_F(CliTest, ValidatesTheS1Plan) {
  CliResult r = Cli("plan validate " + std::string(FLEETMARK_SOURCE_DIR) +
                    "/plans/s1-frameworks.txtpb");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("130 cases"));
}

// The README describes the markers the table really prints.
TEST_F(CliTest, ReadmeMatchesTheTableLegend) {
  const std::string readme = ReadFile(fs::path(FLEETMARK_SOURCE_DIR) / "README.md");
  for (const char* marker : {"(rep cap)", "(time cap)", "[throttled]", "130", "RE2"}) {
    EXPECT_THAT(readme, HasSubstr(marker)) << marker;
  }
  EXPECT_THAT(readme, Not(HasSubstr("`~` marks")));
  EXPECT_THAT(readme, Not(HasSubstr("`!` a throttled")));
}

TEST_F(CliTest, ListsEveryName) {
  CliResult r = Cli("list");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* name : {"direct", "single_thread", "fixed_pool", "work_stealing", "limited",
                           "elastic_pool", "thread_per_task", "async", "coroutine", "fiber",
                           "event_loop", "arithmetic", "collections", "storage", "network",
                           "mixed", "batch", "memory", "fanout", "load"}) {
    EXPECT_THAT(r.out, HasSubstr(std::string("  ") + name + " ")) << name;
  }
}

TEST_F(CliTest, RunsATinyPlanInEveryFormat) {
  const fs::path plan = Write("tiny.txtpb", kTinyPlan);

  CliResult table = Cli("run " + plan.string());
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("fixed_pool_2"));
  EXPECT_THAT(table.out, HasSubstr("direct"));
  EXPECT_THAT(table.err, HasSubstr("4 cases"));
  EXPECT_THAT(table.err, Not(HasSubstr("\033[K")));  // no progress bar off a terminal

  const fs::path json_out = dir_ / "out.json";
  CliResult json = Cli("run " + plan.string() + " --format=json --out " + json_out.string());
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_TRUE(json.out.empty());
  absl::StatusOr<fleetmark::v1::RunReport> report =
      fleetmark::report::ParseJson(ReadFile(json_out));
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->plan_name(), "tiny");
  ASSERT_EQ(report->results_size(), 4);
  for (const auto& r : report->results()) {
    EXPECT_EQ(r.status(), fleetmark::v1::CASE_STATUS_OK) << r.message();
    EXPECT_EQ(r.result_id().size(), 36u);
    EXPECT_GT(r.stats().median_ns(), 0);
    EXPECT_LE(r.samples_ns_size(), 12);
  }
  EXPECT_GT(report->host().logical_cpus(), 0u);
  // Plan order, whatever order the shuffled rounds finished the cases in.
  EXPECT_EQ(report->results(0).spec().case_id(), "batch/arithmetic/blocking/direct/any");
  EXPECT_EQ(report->results(3).spec().case_id(), "batch/storage/blocking/fixed_pool_2/any");

  CliResult csv = Cli("run " + plan.string() + " --format csv --filter storage");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  std::vector<std::string> lines = absl::StrSplit(csv.out, "\r\n", absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u);  // header + the two storage cases
  const std::vector<std::string> header = absl::StrSplit(lines[0], ',');
  EXPECT_EQ(header, fleetmark::report::CsvColumns());
  EXPECT_THAT(lines[1], HasSubstr("storage"));

  CliResult gbench = Cli("run " + plan.string() + " --format=gbench-json");
  ASSERT_EQ(gbench.exit_code, 0) << gbench.err;
  nlohmann::json doc = nlohmann::json::parse(gbench.out);
  ASSERT_TRUE(doc.contains("context"));
  ASSERT_TRUE(doc["benchmarks"].is_array());
  std::set<std::string> names;
  for (const auto& b : doc["benchmarks"]) names.insert(b["run_name"].get<std::string>());
  EXPECT_EQ(names.size(), 4u);
}

TEST_F(CliTest, GbenchExportsCompareWithGoogleBenchmarksTool) {
  const char* compare = "/usr/share/benchmark/compare.py";
  if (!fs::exists(compare)) GTEST_FAIL() << compare << " missing (deploy/install-deps.sh)";
  const fs::path plan = Write("tiny.txtpb", kTinyPlan);
  const fs::path a = dir_ / "a.json", b = dir_ / "b.json";
  ASSERT_EQ(Cli("run " + plan.string() + " --format=gbench-json --out " + a.string()).exit_code, 0);
  ASSERT_EQ(Cli("run " + plan.string() + " --format=gbench-json --out " + b.string()).exit_code, 0);
  const fs::path out = dir_ / "compare.txt";
  const std::string command = std::string("/usr/bin/python3 ") + compare + " benchmarks " +
                              a.string() + " " + b.string() + " >" + out.string() + " 2>&1";
  const int status = std::system(command.c_str());
  const std::string text = ReadFile(out);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << text;
  EXPECT_THAT(text, HasSubstr("batch/arithmetic/blocking/direct/any"));
  EXPECT_THAT(text, HasSubstr("batch/storage/blocking/fixed_pool_2/any"));
}

}  // namespace
