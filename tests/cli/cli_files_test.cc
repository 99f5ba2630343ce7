// Results files as first-class results (issue 34 item 1), end to end through the real
// CLI with real local runs: `run --out` still prints the table (not with --quiet),
// `show FILE` prints a saved file as `runs show` prints a run, and compare, map and
// recommend take several files as devices side by side, saying when two are one host.
#include <cstdint>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "cli_fixture.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/cli/sweep_plan.h"

namespace fleetmark_cli_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST_F(CliTest, RunOutPrintsTheTableUnlessQuiet) {
  const fs::path plan = Write("tiny.txtpb", kTinyPlan);
  const fs::path json = dir_ / "r.json";
  CliResult run = Cli("run " + plan.string() + " --format json --out " + json.string());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.err, HasSubstr("wrote 4 results to " + json.string()));
  // The table on stdout (it printed nothing before), the JSON in the file.
  EXPECT_THAT(run.out, HasSubstr("fixed_pool_2"));
  EXPECT_THAT(run.out, HasSubstr("median"));
  EXPECT_EQ(nlohmann::json::parse(ReadFile(json)).at("devices").at(0).at("results").size(), 4u);

  CliResult quiet = Cli("run " + plan.string() + " --format csv --quiet --out " + (dir_ / "r.csv").string());
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.out, "");
  EXPECT_THAT(ReadFile(dir_ / "r.csv"), HasSubstr("fixed_pool_2"));

  CliResult no_out = Cli("run " + plan.string() + " --quiet");
  EXPECT_EQ(no_out.exit_code, 2);
  EXPECT_THAT(no_out.err, HasSubstr("--quiet: only with --out FILE"));
  EXPECT_EQ(no_out.out, "");
}

TEST_F(CliTest, ShowPrintsAResultsFileAsRunsShowPrintsARun) {
  const fs::path plan = Write("tiny.txtpb", kTinyPlan);
  const fs::path json = dir_ / "r.json";
  CliResult run = Cli("run " + plan.string() + " --format json --out " + json.string());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json doc = nlohmann::json::parse(ReadFile(json));
  const std::string host = doc.at("devices").at(0).at("agent");

  CliResult show = Cli("show " + json.string());
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_THAT(show.out, HasSubstr("results file " + json.string() + "  plan tiny  local"));
  EXPECT_THAT(show.out, HasSubstr("4 cases: 4 ok, 0 unsupported, 0 resource exhausted, 0 failed"));
  EXPECT_THAT(show.out, HasSubstr("== agent " + host + " ("));
  EXPECT_THAT(show.out, HasSubstr("== conditions of agent " + host));
  // The same table renderer as `run` prints: every row of run's table is in show's.
  for (const char* row : {"fixed_pool_2", "direct"}) {
    const std::string line = LineWith(run.out, row);
    ASSERT_FALSE(line.empty()) << row << "\n" << run.out;
    EXPECT_THAT(show.out, HasSubstr(line)) << row;
  }
  CliResult wide = Cli("show --wide " + json.string());
  EXPECT_EQ(wide.exit_code, 0) << wide.err;
  EXPECT_THAT(wide.out, HasSubstr("start: "));  // --wide: every case's conditions

  // Bad input: exit 2, one line naming the file and the reason.
  EXPECT_EQ(Cli("show").exit_code, 2);
  CliResult missing = Cli("show " + (dir_ / "none.json").string());
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, HasSubstr("none.json: cannot open results file"));
  CliResult directory = Cli("show " + dir_.string());
  EXPECT_EQ(directory.exit_code, 2);
  EXPECT_THAT(directory.err, HasSubstr("FILE must be a regular file"));
  CliResult csv_run = Cli("run " + plan.string() + " --format csv --quiet --out " + (dir_ / "r.csv").string());
  ASSERT_EQ(csv_run.exit_code, 0) << csv_run.err;
  CliResult csv = Cli("show " + (dir_ / "r.csv").string());
  EXPECT_EQ(csv.exit_code, 2);
  EXPECT_THAT(csv.err, HasSubstr("r.csv: a CSV results file; only JSON results files are read back"));
  EXPECT_EQ(Count(csv.err, "\n"), 1u) << csv.err;
  nlohmann::json newer = doc;
  newer["schema_version"] = 99;
  const fs::path future = Write("future.json", newer.dump());
  CliResult refused = Cli("show " + future.string());
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.err,
              HasSubstr("schema_version 99 is newer than this fleetmark reads (1 <= schema_version <= 1)"));
  EXPECT_EQ(refused.out, "");
}

TEST_F(CliTest, CompareMapAndRecommendTakeSeveralFilesSideBySide) {
  const fs::path plan = Write("sweep.txtpb", kSweepPlan);
  const fs::path a = dir_ / "a.json";
  CliResult run = Cli("run " + plan.string() + " --format json --quiet --out " + a.string());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  nlohmann::json doc = nlohmann::json::parse(ReadFile(a));
  const std::string host = doc.at("devices").at(0).at("agent");
  // b.json: the same results as from another host; c.json: the same host again.
  nlohmann::json other = doc;
  other["devices"][0]["agent"] = "other-box";
  other["devices"][0]["host"]["hostname"] = "other-box";
  // Another run's results have their own result ids (the same ids are the same results).
  for (nlohmann::json* d : {&other, &doc}) {
    for (nlohmann::json& result : (*d)["devices"][0]["results"]) {
      result["result_id"] = result["result_id"].get<std::string>() + (d == &other ? "-b" : "-c");
    }
  }
  const fs::path b = Write("b.json", other.dump());
  const fs::path c = Write("c.json", doc.dump());

  CliResult compare = Cli("compare --results " + a.string() + "," + b.string());
  ASSERT_EQ(compare.exit_code, 0) << compare.err;
  EXPECT_THAT(compare.out, HasSubstr("results files " + a.string() + ", " + b.string() + "  plan sweep"));
  EXPECT_THAT(compare.out, HasSubstr("Best strategy per workload and device"));
  EXPECT_THAT(LineWith(compare.out, "workload / point"), HasSubstr(host));
  EXPECT_THAT(LineWith(compare.out, "workload / point"), HasSubstr("other-box"));
  EXPECT_THAT(compare.out, HasSubstr("other-box/" + host));  // the ratio column
  EXPECT_THAT(compare.out, Not(HasSubstr("one host")));

  // The same host twice: both devices, labelled apart, and said to be one host.
  CliResult same = Cli("compare --format json --results " + a.string() + "," + c.string());
  ASSERT_EQ(same.exit_code, 0) << same.err;
  const nlohmann::json answer = nlohmann::json::parse(same.out);
  EXPECT_EQ(answer.at("agents"), nlohmann::json::array({host, host + " (c.json)"}));
  EXPECT_EQ(answer.at("results_files"), nlohmann::json::array({a.string(), c.string()}));
  ASSERT_EQ(answer.at("one_machine").size(), 1u);
  EXPECT_THAT(answer.at("one_machine")[0].get<std::string>(),
              HasSubstr(host + " and " + host + " (c.json) are one host (host name " + host));
  CliResult one_agent = Cli("compare --agents other-box --results " + a.string() + "," + b.string());
  EXPECT_EQ(one_agent.exit_code, 0) << one_agent.err;
  CliResult unknown = Cli("compare --agents nobody --results " + a.string());
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_THAT(unknown.err, HasSubstr("\"nobody\" has no results in the --results files"));

  CliResult map = Cli("map --results " + a.string() + "," + b.string() + "," + c.string());
  ASSERT_EQ(map.exit_code, 0) << map.err;
  EXPECT_THAT(map.out, HasSubstr("device " + host + "\n"));
  EXPECT_THAT(map.out, HasSubstr("device other-box\n"));
  EXPECT_THAT(map.out, HasSubstr("device " + host + " (c.json)\n"));
  EXPECT_THAT(map.err, HasSubstr("fleetmark: map: note: " + host + " and " + host + " (c.json) are one host"));

  CliResult recommend =
      Cli("recommend --profile wait_us=1000 --format json --results " + a.string() + "," + b.string());
  ASSERT_EQ(recommend.exit_code, 0) << recommend.err;
  EXPECT_THAT(recommend.out, HasSubstr("\"other-box\""));
  EXPECT_THAT(recommend.out, HasSubstr("\"" + host + "\""));

  // Bad input names --results: a file twice, an empty item, a run id and files at once.
  CliResult twice = Cli("compare --results " + a.string() + "," + a.string());
  EXPECT_EQ(twice.exit_code, 2);
  EXPECT_THAT(twice.err, HasSubstr("--results: each file once"));
  CliResult empty_item = Cli("map --results " + a.string() + ",");
  EXPECT_EQ(empty_item.exit_code, 2);
  EXPECT_THAT(empty_item.err, HasSubstr("--results: item 2"));
  CliResult both = Cli("compare 0123456789ab --results " + a.string());
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_THAT(both.err, HasSubstr("compare takes one run id or --results FILE[,FILE...]"));
}

// Issue 34's trial (D2): ./a.json and /abs/a.json, or a copy of a.json, were two
// devices side by side. One file (its canonical path) and one result (its result id)
// count once; the error names both files.
TEST_F(CliTest, ResultsFilesCountEachFileAndEachResultOnce) {
  const fs::path plan = Write("tiny.txtpb", kTinyPlan);
  const fs::path a = dir_ / "a.json";
  CliResult run = Cli("run " + plan.string() + " --format json --quiet --out " + a.string());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  for (const char* command : {"compare", "map", "recommend --profile cpu_us=1"}) {
    CliResult two_paths = Cli(std::string(command) + " --results ./a.json," + a.string(), "", dir_);
    EXPECT_EQ(two_paths.exit_code, 2) << command << two_paths.err;
    EXPECT_THAT(two_paths.err, HasSubstr("--results: each file once, got ./a.json and " + a.string() + ", one file"))
        << command;
    EXPECT_EQ(Count(two_paths.err, "\n"), 1u) << two_paths.err;
  }
  const fs::path copy = Write("copy.json", ReadFile(a));
  CliResult copied = Cli("compare --results " + a.string() + "," + copy.string());
  EXPECT_EQ(copied.exit_code, 2) << copied.err;
  EXPECT_THAT(copied.err,
              HasSubstr("--results: " + a.string() + " and " + copy.string() + " hold the same results (result id "));
  EXPECT_EQ(copied.out, "");
}

// D3, D4, D5: one loader rule for every command reading results files: a file with no
// result, a file that is not a results document (said in fleetmark's words, with where),
// and a file above kMaxResultsFileBytes (refused by its size, before it is read).
TEST_F(CliTest, EveryReaderOfResultsFilesRefusesTheSameFilesInOneLine) {
  const fs::path empty = Write("empty.json", "{\"schema_version\": 1}");
  const fs::path array = Write("array.json", "[1, 2]");
  const fs::path broken = Write("broken.json", "{\n  \"schema_version\": 1,\n  oops\n}");
  const fs::path blank = Write("blank.json", "  \n");
  const fs::path huge = dir_ / "huge.json";
  { std::ofstream(huge) << "{"; }
  fs::resize_file(huge, (uint64_t{256} << 20) + 1);  // sparse: nothing is written
  const std::vector<std::pair<fs::path, std::string>> refusals = {
      {empty, "empty.json: the file holds no results (no device measured anything)"},
      {array,
       "array.json: not a results file of `fleetmark run --format json` or `fleetmark export --format json`: "
       "its top level is an array, not an object; expected one JSON object {\"schema_version\": 1"},
      {broken,
       "broken.json: not a results file of `fleetmark run --format json` or `fleetmark export --format "
       "json`: line 3, column 3: not valid JSON ("},
      {blank,
       "blank.json: not a results file of `fleetmark run --format json` or `fleetmark export --format json`: "
       "the file is empty"},
      {huge, "huge.json: results file is 268435457 bytes or more; at most 268435456 (256 MiB)"},
  };
  for (const char* command : {"show", "compare --results", "map --results", "recommend --profile cpu_us=1 --results"}) {
    for (const auto& [file, message] : refusals) {
      CliResult r = Cli(std::string(command) + " " + file.string());
      EXPECT_EQ(r.exit_code, 2) << command << " " << file;
      EXPECT_EQ(r.out, "") << command << " " << file;
      EXPECT_THAT(r.err, HasSubstr(message)) << command;
      EXPECT_THAT(r.err, Not(HasSubstr("Root element"))) << r.err;
      EXPECT_EQ(Count(r.err, "\n"), 1u) << r.err;
    }
  }
}

// Issue 34's second trial: a hand-made file whose cases had no spec was shown under
// invented defaults ("batch · blocking · n=100", strategy "?"), and empty case ids
// passed. Every reader refuses such a result by position, naming the field, in one line.
TEST_F(CliTest, EveryReaderRefusesAResultThatNamesNoCase) {
  const fs::path plan = Write("tiny.txtpb", kTinyPlan);
  const fs::path good = dir_ / "good.json";
  CliResult run = Cli("run " + plan.string() + " --format json --quiet --out " + good.string());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json doc = nlohmann::json::parse(ReadFile(good));
  nlohmann::json no_spec = doc;
  no_spec["devices"][0]["results"][2].erase("spec");
  nlohmann::json empty_id = doc;
  empty_id["devices"][0]["results"][1]["spec"]["case_id"] = "";
  const std::vector<std::pair<fs::path, std::string>> refusals = {
      {Write("nospec.json", no_spec.dump()), "nospec.json: devices[0].results[2].spec: missing (device \""},
      {Write("emptyid.json", empty_id.dump()), "emptyid.json: devices[0].results[1].spec.case_id: missing (device \""},
  };
  for (const char* command : {"show", "compare --results", "map --results", "recommend --profile cpu_us=1 --results"}) {
    for (const auto& [file, message] : refusals) {
      CliResult r = Cli(std::string(command) + " " + file.string());
      EXPECT_EQ(r.exit_code, 2) << command << " " << file;
      EXPECT_EQ(r.out, "") << command << " " << file;
      EXPECT_THAT(r.err, HasSubstr(message)) << command;
      EXPECT_THAT(r.err, HasSubstr("every result names its case")) << command;
      EXPECT_EQ(Count(r.err, "\n"), 1u) << r.err;
    }
  }
  CliResult shown = Cli("show " + good.string());
  EXPECT_EQ(shown.exit_code, 0) << shown.err;
}

}  // namespace
}  // namespace fleetmark_cli_test
