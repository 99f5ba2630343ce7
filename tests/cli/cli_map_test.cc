// `fleetmark map --results FILE` end to end: a real local run of a swept synthetic plan
// (real child processes), its JSON and CSV exports keeping the sweep parameters, the
// calibration recorded, --filter on a point, and the map's table and JSON (one process:
// verdicts over at least 3 paired processes); bad input exits 2.
#include <string>

#include "cli_fixture.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/cli/sweep_plan.h"

namespace fleetmark_cli_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST_F(CliTest, MapOfALocalSweepRun) {
  const fs::path plan = Write("sweep.txtpb", kSweepPlan);
  const fs::path json = dir_ / "r.json";
  CliResult run = Cli("run " + plan.string() + " --format json --out " + json.string());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json doc = nlohmann::json::parse(ReadFile(json));
  const nlohmann::json& results = doc.at("devices").at(0).at("results");
  ASSERT_EQ(results.size(), 4u);
  for (const nlohmann::json& r : results) {
    const std::string id = r.at("spec").at("case_id");
    EXPECT_THAT(id, ::testing::MatchesRegex(R"(batch/synthetic\[cpu_ns=2000,wait_us=(0|1000)\]/blocking/.*/any)"));
    EXPECT_EQ(r.at("spec").at("synthetic").at("cpu_ns"), 2000) << id;
    EXPECT_EQ(r.at("spec").at("swept"), nlohmann::json::array({"wait_us"})) << id;
    // `processes: 1` is raised to 3: one calibration per process, in ns per loop
    // iteration, and each process tagged with its round (the two strategies of a point
    // race, so they may have more).
    const size_t processes = r.at("process_medians_ns").size();
    EXPECT_GE(processes, 3u) << id;
    ASSERT_EQ(r.at("synthetic_ns_per_iteration").size(), processes) << id;
    EXPECT_GT(r.at("synthetic_ns_per_iteration")[0].get<double>(), 0) << id;
    ASSERT_EQ(r.at("process_rounds").size(), processes) << id;
    for (size_t i = 0; i < processes; ++i) EXPECT_EQ(r.at("process_rounds")[i], i + 1) << id;
    EXPECT_FALSE(r.at("quick").get<bool>()) << id;
  }
  EXPECT_FALSE(doc.at("run").at("quick").get<bool>());

  // A --quick run's document and results say so (they said quick: false).
  const fs::path quick_json = dir_ / "quick.json";
  CliResult quick = Cli("run --quick " + plan.string() + " --format json --out " + quick_json.string());
  ASSERT_EQ(quick.exit_code, 0) << quick.err;
  const nlohmann::json quick_doc = nlohmann::json::parse(ReadFile(quick_json));
  EXPECT_TRUE(quick_doc.at("run").at("quick").get<bool>());
  for (const nlohmann::json& r : quick_doc.at("devices").at(0).at("results")) {
    EXPECT_TRUE(r.at("quick").get<bool>()) << r.at("spec").at("case_id");
    EXPECT_GE(r.at("process_medians_ns").size(), 3u) << r.at("spec").at("case_id");
  }

  CliResult map = Cli("map --results " + json.string());
  ASSERT_EQ(map.exit_code, 0) << map.err;
  EXPECT_THAT(map.out, HasSubstr("batch/synthetic[cpu_ns=2000]/blocking/any  (swept: wait_us)"));
  EXPECT_THAT(map.out, HasSubstr("wait_us  leader"));
  // One row per point (wait_us right-aligned under its header), each with a verdict:
  // `processes: 1` is raised to 3 paired processes, so never provisional, and never an
  // interval of [0.00x, inf].
  EXPECT_THAT(map.out, HasSubstr("\n      0  ")) << map.out;
  EXPECT_THAT(map.out, HasSubstr("\n   1000  ")) << map.out;
  EXPECT_EQ(Count(map.out, "provisional"), 0u) << map.out;
  EXPECT_EQ(Count(map.out, "[0.00x"), 0u) << map.out;

  // --format json: the same map, one device.
  CliResult map_json = Cli("map --format json --results " + json.string());
  ASSERT_EQ(map_json.exit_code, 0) << map_json.err;
  const nlohmann::json m = nlohmann::json::parse(map_json.out);
  ASSERT_EQ(m.at("devices").size(), 1u) << map_json.out;
  const nlohmann::json& points = m.at("devices").at(0).at("map").at("points");
  ASSERT_EQ(points.size(), 2u) << map_json.out;
  EXPECT_EQ(points.at(0).at("point").at("wait_us"), 0);  // by value
  EXPECT_EQ(points.at(1).at("point").at("wait_us"), 1000);
  for (const nlohmann::json& p : points) {
    EXPECT_NE(p.at("kind"), "provisional") << p.dump();
    EXPECT_GE(p.at("pairs").get<int>(), 3) << p.dump();
  }
  CliResult bad_format = Cli("map --format csv --results " + json.string());
  EXPECT_EQ(bad_format.exit_code, 2);
  EXPECT_THAT(bad_format.err, HasSubstr("map: --format: table or json, got \"csv\""));

  // --filter selects a point by its id; CSV keeps the parameters as columns.
  CliResult filtered = Cli("run " + plan.string() + " --format csv --filter 'wait_us=1000\\]'");
  ASSERT_EQ(filtered.exit_code, 0) << filtered.err;
  EXPECT_THAT(filtered.out, HasSubstr(",cpu_ns,wait_us,wait_distribution,"));
  EXPECT_EQ(Count(filtered.out, ",2000,1000,fixed,0,0,0,wait_us,"), 2u) << filtered.out;
  EXPECT_THAT(filtered.out, Not(HasSubstr("wait_us=0]")));
}

TEST_F(CliTest, MapRefusesBadInput) {
  EXPECT_EQ(Cli("map").exit_code, 2);
  CliResult missing = Cli("map --results " + (dir_ / "none.json").string());
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, HasSubstr("none.json: cannot open results file: No such file or directory"));
  // Only a size-capped regular file (or -) is read: /dev/zero read without end until the
  // OOM killer stopped it (22 GB), a directory said "Unexpected end of string".
  CliResult device = Cli("map --results /dev/zero");
  EXPECT_EQ(device.exit_code, 2);
  EXPECT_THAT(device.err, HasSubstr("/dev/zero: is a character device; --results must be a regular file"));
  CliResult directory = Cli("map --results " + dir_.string());
  EXPECT_EQ(directory.exit_code, 2);
  EXPECT_THAT(directory.err, HasSubstr(": is a directory; --results must be a regular file"));
  CliResult piped = Cli("map --results -", "< /dev/null");
  EXPECT_EQ(piped.exit_code, 2);
  EXPECT_THAT(piped.err, HasSubstr("not a results file"));
  const fs::path bad = Write("bad.json", "{\"results\": 5}");
  CliResult malformed = Cli("map --results " + bad.string());
  EXPECT_EQ(malformed.exit_code, 2);
  EXPECT_THAT(malformed.err, HasSubstr("not a results file"));
  EXPECT_EQ(Cli("map 0123456789ab --results " + bad.string()).exit_code, 2);
  // A valid document without a device's results printed nothing and exited 0.
  const fs::path empty = Write("empty.json", "{\"schema_version\": 1, \"devices\": []}");
  for (const char* command : {"map", "recommend --profile cpu_us=50"}) {
    CliResult nothing = Cli(std::string(command) + " --results " + empty.string());
    EXPECT_EQ(nothing.exit_code, 2) << command;
    EXPECT_EQ(nothing.out, "") << command;
    EXPECT_THAT(nothing.err, HasSubstr("empty.json: the file holds no results (no device measured anything)"))
        << command;
  }
  // Parameters without the synthetic workload, or an unknown swept one, are plan errors.
  const fs::path plan = Write("p.txtpb",
                              "matrix { strategies { name: \"direct\" } workloads: \"synthetic\" batch {}\n"
                              "  sweeps { param: \"threads\" values: 1 } }\n");
  CliResult invalid = Cli("plan validate " + plan.string());
  EXPECT_EQ(invalid.exit_code, 2);
  EXPECT_THAT(invalid.err, HasSubstr("plan.matrix[0].sweeps[0].param: one of cpu_ns, wait_us, alloc_bytes, touch_kib"));
}

}  // namespace
}  // namespace fleetmark_cli_test

namespace fleetmark_cli_test {
namespace {

// A results document of one device "h" with the given results (JSON objects).
std::string Document(const std::string& results) {
  return "{\"schema_version\": 1, \"devices\": [{\"agent\": \"h\", \"results\": [" + results + "]}]}";
}

// One OK batch result of the synthetic workload.
std::string Result(const std::string& case_id, const std::string& median_ns, const std::string& wait_us = "1000") {
  return "{\"spec\": {\"case_id\": \"" + case_id +
         "\", \"scenario\": \"batch\", \"workload\": \"synthetic\", \"io_mode\": \"blocking\", "
         "\"strategy\": {\"name\": \"direct\"}, \"batch\": {\"tasks\": 10}, \"synthetic\": {\"wait_us\": " +
         wait_us + "}}, \"status\": \"CASE_STATUS_OK\", \"stats\": {\"count\": \"5\", \"median_ns\": " + median_ns +
         "}}";
}

// Every command that reads a results file refuses one whose values no measurement
// makes, with one line naming the file, the device and case, the field and the range
// (map and recommend drew maps from them).
TEST_F(CliTest, ResultsFilesAreCheckedByEveryReader) {
  struct Bad {
    std::string name, document, error;
  };
  const Bad bad[] = {
      {"dup.json", Document(Result("c1", "1000") + "," + Result("c1", "2000")),
       "dup.json: device \"h\", case \"c1\": spec.case_id: each case at most once per device, got it twice"},
      {"negative.json", Document(Result("c1", "-5")),
       "negative.json: device \"h\", case \"c1\": stats.median_ns: 0 <= median_ns <= 8.64e+13 (ns), got -5"},
      {"huge.json", Document(Result("c1", "1e20")),
       "huge.json: device \"h\", case \"c1\": stats.median_ns: 0 <= median_ns <= 8.64e+13 (ns), got 1e+20"},
      {"wait.json", Document(Result("c1", "1000", "20000000")),
       "wait.json: device \"h\", case \"c1\": spec.synthetic.wait_us: 0 <= wait_us <= 10000000, got 20000000"},
  };
  for (const Bad& b : bad) {
    const fs::path file = Write(b.name, b.document);
    for (const char* command : {"map", "recommend --profile cpu_us=50"}) {
      CliResult r = Cli(std::string(command) + " --results " + file.string());
      EXPECT_EQ(r.exit_code, 2) << command << " " << b.name << ": " << r.err;
      EXPECT_THAT(r.err, HasSubstr(b.error)) << command;
      EXPECT_EQ(Count(r.err, "\n"), 1u) << command << ": " << r.err;
      EXPECT_EQ(r.out, "") << command;
    }
  }
  // The same document with sane values passes the check (whatever the map says of it).
  const fs::path good = Write("good.json", Document(Result("c1", "1000") + "," + Result("c2", "2000")));
  CliResult ok = Cli("map --results " + good.string());
  EXPECT_THAT(ok.err, Not(HasSubstr("device \"h\", case"))) << ok.err;
}

// A file that is not JSON (a CSV export) is refused in one line naming the file and
// protobuf's problem, without the input it quotes: the CSV's newline showed as "\x0a".
TEST_F(CliTest, NotJsonResultsSayWhyInOneLine) {
  const fs::path csv = Write("s1.csv", "case_id,median_ns\nbatch/x,1000\nbatch/y,2000\n");
  for (const char* command : {"map", "recommend --profile cpu_us=50"}) {
    CliResult r = Cli(std::string(command) + " --results " + csv.string());
    EXPECT_EQ(r.exit_code, 2) << command;
    EXPECT_THAT(r.err, HasSubstr("s1.csv: not a results file of `fleetmark run --format json`")) << command;
    EXPECT_THAT(r.err, Not(HasSubstr("\\x"))) << r.err;
    EXPECT_THAT(r.err, Not(HasSubstr("fleetmark.v1"))) << r.err;
    EXPECT_EQ(Count(r.err, "\n"), 1u) << r.err;
  }
}

}  // namespace
}  // namespace fleetmark_cli_test
