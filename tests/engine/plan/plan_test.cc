// Plan parsing, validation (field paths, ranges, line:column) and case expansion.
#include "engine/plan/plan.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "absl/time/clock.h"
#include "absl/strings/match.h"
#include "engine/strategies/registry.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetmark::engine {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kTinyPlan[] = R"pb(name: "tiny"
                                  matrix {
                                    strategies { name: "direct" }
                                    strategies { name: "fixed_pool" threads: 4 }
                                    strategies { name: "fixed_pool" threads: 100 label: "fixed_pool_io" }
                                    workloads: [ "arithmetic", "storage" ]
                                    io_modes: [ "blocking", "suspending" ]
                                    batch { tasks: 10 }
                                  }
)pb";

absl::Status ValidateText(const std::string& text) {
  absl::StatusOr<ParsedPlan> parsed = ParsePlan(text, PlanFormat::kText, "p.txtpb");
  if (!parsed.ok()) return parsed.status();
  return ValidatePlan(*parsed);
}

// A plan with one strategy line replaced, for range checks.
std::string WithStrategy(const std::string& strategy) {
  return "matrix {\n  strategies { " + strategy + " }\n  workloads: \"arithmetic\"\n  batch {}\n}\n";
}

// Trial of 2026-12-02, finding 9: a workload on a scenario that runs none was accepted
// silently. Fanout and load refuse it; memory keeps it as a name (stored nightly plans
// have `workloads: ["storage"]` on their memory blocks).
TEST(ValidatePlanTest, FanoutAndLoadTakeNoWorkloads) {
  for (const auto& [scenario, why] :
       {std::pair<std::string, std::string>{"fanout {}", "fanout's tasks only wait on their dependency calls"},
        {"load {}", "its server does fixed work"}}) {
    const absl::Status status = ValidateText(
        "name: \"m\"\nmatrix {\n  strategies { name: \"thread_per_task\" }\n"
        "  workloads: [\"arithmetic\"]\n  " +
        scenario + "\n}\n");
    ASSERT_TRUE(absl::IsInvalidArgument(status)) << scenario << ": " << status;
    EXPECT_THAT(status.message(),
                HasSubstr("p.txtpb:4:15: plan.matrix[0].workloads[0]: this scenario runs no workload (" + why +
                          "); leave workloads out, got \"arithmetic\""))
        << scenario;
  }
  EXPECT_TRUE(ValidateText("name: \"m\"\nmatrix {\n  strategies { name: \"thread_per_task\" }\n  memory {}\n}\n").ok());
  EXPECT_TRUE(ValidateText("name: \"m\"\nmatrix {\n  strategies { name: \"thread_per_task\" }\n"
                           "  workloads: [\"storage\"]\n  memory {}\n}\n")
                  .ok());
}

TEST(ParsePlanTest, ParsesTextAndExpandsTheCartesianProduct) {
  absl::StatusOr<ParsedPlan> parsed = ParsePlan(kTinyPlan, PlanFormat::kText);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_TRUE(ValidatePlan(*parsed).ok()) << ValidatePlan(*parsed);
  std::vector<v1::CaseSpec> cases = ExpandCases(parsed->plan, false);
  ASSERT_EQ(cases.size(), 3u * 2u * 2u);  // strategies × workloads × io modes × [any]
  EXPECT_EQ(cases[0].case_id(), "batch/arithmetic/blocking/direct/any");
  EXPECT_EQ(cases[1].case_id(), "batch/arithmetic/blocking/fixed_pool_4/any");
  EXPECT_EQ(cases[2].case_id(), "batch/arithmetic/blocking/fixed_pool_io/any");
  EXPECT_EQ(cases[3].case_id(), "batch/arithmetic/suspending/direct/any");
  EXPECT_EQ(cases.back().case_id(), "batch/storage/suspending/fixed_pool_io/any");
  EXPECT_EQ(cases[1].strategy().threads(), 4u);
  EXPECT_EQ(cases[1].strategy().label(), "fixed_pool_4");
  EXPECT_EQ(cases[0].batch().tasks(), 10u);
  EXPECT_EQ(cases[0].placement(), "any");
  EXPECT_EQ(cases[0].scenario(), "batch");
  std::set<std::string> ids;
  for (const auto& c : cases) ids.insert(c.case_id());
  EXPECT_EQ(ids.size(), cases.size());
}

TEST(ParsePlanTest, FillsDefaults) {
  absl::StatusOr<ParsedPlan> parsed = ParsePlan(
      "matrix { strategies { name: 'direct' } workloads: 'network' batch {} "
      "placements: ['any', 'cpus:0'] }",
      PlanFormat::kText);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  std::vector<v1::CaseSpec> cases = ExpandCases(parsed->plan, false);
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[0].io_mode(), "blocking");
  EXPECT_EQ(cases[0].batch().tasks(), kDefaultBatchTasks);
  EXPECT_EQ(cases[1].case_id(), "batch/network/blocking/direct/cpus:0");
  v1::MeasurementSettings m = ResolveMeasurement(parsed->plan.measurement());
  EXPECT_EQ(m.warmup_seconds(), kDefaultWarmupSeconds);
  EXPECT_EQ(m.target_ci_percent(), 2.0);
  EXPECT_EQ(m.min_repetitions(), 10u);
  EXPECT_EQ(m.max_repetitions(), 1000u);
  EXPECT_EQ(m.max_seconds_per_case(), 10.0);
  EXPECT_EQ(m.rounds(), kDefaultRounds);
  EXPECT_EQ(m.processes(), 3u);  // kDefaultProcesses
}

TEST(ParsePlanTest, SyntaxErrorNamesLineAndColumn) {
  absl::StatusOr<ParsedPlan> parsed =
      ParsePlan("name: \"x\"\nmatrix {\n  bogus_field: 3\n}\n", PlanFormat::kText, "bad.txtpb");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(parsed.status().message(), HasSubstr("bad.txtpb:3:"));
  EXPECT_THAT(parsed.status().message(), HasSubstr("bogus_field"));

  parsed = ParsePlan("matrix { strategies { threads: -1 } }", PlanFormat::kText, "neg.txtpb");
  ASSERT_FALSE(parsed.ok());
  EXPECT_THAT(parsed.status().message(), HasSubstr("neg.txtpb:1:"));
}

// Parser errors in words: what was expected and that the file ended (it said "Expected
// identifier, got: " with nothing after), an unknown field with the block's fields and
// a did-you-mean (it said `Message type "fleetmark.v1.Plan" has no field named ...`).
TEST(ParsePlanTest, ParserErrorsSayWhatWasExpectedWithoutProtobufTypes) {
  auto error_of = [](const std::string& text) {
    absl::StatusOr<ParsedPlan> parsed = ParsePlan(text, PlanFormat::kText, "p.txtpb");
    return parsed.ok() ? std::string("OK") : std::string(parsed.status().message());
  };
  EXPECT_EQ(error_of("matrix {\n  strategies { name: \"direct\" }\n"),
            "p.txtpb:3:1: plan.matrix[0]: expected a field name or the \"}\" that closes this block, but the file "
            "ended (a \"{\" is not closed)");
  EXPECT_THAT(error_of("matrix { strategies { name: \"direct\" # open\n"), HasSubstr("but the file ended"));
  EXPECT_THAT(error_of("name: "), HasSubstr("but the file ended"));
  const std::string unknown = error_of("matrx {}\n");
  EXPECT_THAT(unknown, HasSubstr("p.txtpb:1:"));
  EXPECT_THAT(unknown, HasSubstr("no field \"matrx\" here (did you mean \"matrix\"?); the fields here: name, "
                                 "description, matrix"));
  EXPECT_THAT(error_of("matrix { stratgies { name: 'direct' } }"),
              HasSubstr("no field \"stratgies\" here (did you mean \"strategies\"?)"));
  for (const std::string text : {"matrx {}", "matrix { stratgies {} }", "matrix {", "measurement { rounds: x }",
                                 "matrix { batch { tasks: 1 } batch { tasks: 2 } }"}) {
    const std::string error = error_of(text);
    EXPECT_THAT(error, Not(HasSubstr("fleetmark.v1"))) << text;
    EXPECT_FALSE(absl::EndsWith(error, "got: ") || absl::EndsWith(error, "got:")) << text << ": " << error;
    EXPECT_NE(error.back(), ' ') << text;
  }
}

TEST(ParsePlanTest, ParsesJson) {
  absl::StatusOr<ParsedPlan> parsed = ParsePlan(
      R"({"name": "j", "matrix": [{"strategies": [{"name": "direct"}],
          "workloads": ["arithmetic"], "batch": {"tasks": 5}}]})",
      PlanFormat::kJson, "p.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(ValidatePlan(*parsed).ok());
  EXPECT_EQ(ExpandCases(parsed->plan, false).size(), 1u);

  absl::StatusOr<ParsedPlan> bad = ParsePlan(R"({"matrix": [{"strategies": 3}]})", PlanFormat::kJson, "bad.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("bad.json"));
  // Semantic errors of JSON plans name the field (no line:column: protobuf's JSON
  // parser keeps no positions).
  absl::StatusOr<ParsedPlan> range = ParsePlan(
      R"({"matrix": [{"strategies": [{"name": "direct", "threads": 20000}],
          "workloads": ["arithmetic"], "batch": {}}]})",
      PlanFormat::kJson, "r.json");
  ASSERT_TRUE(range.ok());
  EXPECT_EQ(ValidatePlan(*range).message(),
            "r.json: plan.matrix[0].strategies[0].threads: 0 <= threads <= 10000, got 20000");
}

TEST(ParsePlanTest, FormatFromPath) {
  EXPECT_EQ(PlanFormatFromPath("a/b.json"), PlanFormat::kJson);
  EXPECT_EQ(PlanFormatFromPath("a/b.JSON"), PlanFormat::kJson);
  EXPECT_EQ(PlanFormatFromPath("a/b.txtpb"), PlanFormat::kText);
}

TEST(LoadPlanFileTest, MissingFileIsNotFound) {
  absl::StatusOr<ParsedPlan> parsed = LoadPlanFile("/nonexistent/plan.txtpb");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(parsed.status().message(), HasSubstr("/nonexistent/plan.txtpb"));
}

TEST(LoadPlanFileTest, RefusesDirectoriesDevicesFifosAndHugeFiles) {
  const std::string dir = ::testing::TempDir() + "plan_load_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  absl::StatusOr<ParsedPlan> parsed = LoadPlanFile(dir);
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(parsed.status().message(), HasSubstr(dir + ": is a directory"));

  parsed = LoadPlanFile("/dev/zero");  // would grow without bound if read
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(parsed.status().message(), HasSubstr("character device"));

  const std::string fifo = dir + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const absl::Time start = absl::Now();
  parsed = LoadPlanFile(fifo);  // no writer: must not block
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_THAT(parsed.status().message(), HasSubstr("FIFO"));

  const std::string big = dir + "/big.txtpb";
  {
    std::ofstream out(big, std::ios::binary);
    const std::string comment = "# " + std::string(1 << 20, 'x') + "\n";
    for (int i = 0; i < 17; ++i) out << comment;
  }
  parsed = LoadPlanFile(big);
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(parsed.status().message(), HasSubstr("at most 16777216"));
  std::filesystem::remove_all(dir);
}

TEST(LoadPlanFileTest, SniffsJsonWhateverTheExtension) {
  EXPECT_EQ(SniffPlanFormat("plan", "  \n{\"name\": \"x\"}"), PlanFormat::kJson);
  EXPECT_EQ(SniffPlanFormat("-", "{}"), PlanFormat::kJson);
  EXPECT_EQ(SniffPlanFormat("p.txtpb", "# comment\nname: \"x\""), PlanFormat::kText);
  EXPECT_EQ(SniffPlanFormat("p.json", "name: \"x\""), PlanFormat::kJson);
  const std::string path = ::testing::TempDir() + "sniff_" + std::to_string(::getpid());
  std::ofstream(path) << R"({"name": "sniffed"})";
  absl::StatusOr<ParsedPlan> parsed = LoadPlanFile(path);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->plan.name(), "sniffed");
  std::filesystem::remove(path);
}

TEST(ParsePlanTest, ListElementsAfterTheFirstHaveTheirOwnPosition) {
  const std::string text =
      "matrix {\n"                                                  // 1
      "  strategies: [{ name: \"direct\" }, { name: \"nope\" }]\n"  // 2
      "  workloads: [\"arithmetic\",\n"                             // 3
      "              \"bad\"]\n"                                    // 4
      "  io_modes: [\"blocking\", \"x\"]\n"                         // 5
      "  placements: [\"any\", \"what\"]\n"                         // 6
      "  batch {}\n"
      "}\n"
      "matrix { strategies { name: \"direct\" } memory { task_counts: [1, 10, 0] } }\n";  // 9
  // Fixing each error in turn reveals the next one, each at its own element.
  std::string t = text;
  auto fix = [&](const std::string& from, const std::string& to) {
    t.replace(t.find(from), from.size(), to);
    return std::string(ValidateText(t).message());
  };
  EXPECT_THAT(fix("", ""), HasSubstr("p.txtpb:2:38: plan.matrix[0].strategies[1].name"));
  EXPECT_THAT(fix("\"nope\"", "\"fixed_pool\""), HasSubstr("p.txtpb:4:15: plan.matrix[0].workloads[1]"));
  EXPECT_THAT(fix("\"bad\"", "\"storage\""), HasSubstr("p.txtpb:5:26: plan.matrix[0].io_modes[1]"));
  EXPECT_THAT(fix("\"x\"", "\"suspending\""), HasSubstr("p.txtpb:6:23: plan.matrix[0].placements[1]"));
  EXPECT_THAT(fix("\"what\"", "\"one_per_core\""), HasSubstr("p.txtpb:9:70: plan.matrix[1].memory.task_counts[2]"));
}

// Trial of 2026-12-02, finding 8: "plan.matrix[0].batch.tasks: Integer out of range
// (1000000000000)" named no range; it names the field's own (validation's) range, at the
// number's position, with the number as given.
TEST(ParsePlanTest, AnIntegerPastItsTypeNamesTheFieldsRange) {
  const std::string text =
      "name: \"x\"\nmatrix {\n  strategies { name: \"direct\" }\n  workloads: \"arithmetic\"\n"
      "  batch { tasks: 1000000000000 }\n}\n";
  absl::StatusOr<ParsedPlan> parsed = ParsePlan(text, PlanFormat::kText, "t.txtpb");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(),
            "t.txtpb:5:11: plan.matrix[0].batch.tasks: 0 <= tasks <= 1000000, got 1000000000000");
}

// Issue 34's second trial: `threads: many` said `Expected integer, got: "many"`, 1e400
// for a number said "got inf", and bytes outside ASCII "Interpreting non ascii codepoint
// 195". The field's range comes from validation (the one place ranges are defined).
TEST(ParsePlanTest, ValuesOfTheWrongKindNameTheFieldsRange) {
  const std::string prefix = "name: \"x\"\nmatrix {\n  strategies { name: \"fixed_pool\" ";
  const std::string suffix = " }\n  workloads: \"arithmetic\"\n  batch {}\n}\n";
  auto error_of = [&](const std::string& value) {
    absl::StatusOr<ParsedPlan> parsed = ParsePlan(prefix + value + suffix, PlanFormat::kText, "t.txtpb");
    return parsed.ok() ? std::string("OK") : std::string(parsed.status().message());
  };
  const std::string field = "t.txtpb:3:35: plan.matrix[0].strategies[0].threads: ";
  EXPECT_EQ(error_of("threads: many"), field + "expected an integer, 0 <= threads <= 10000, got \"many\"");
  EXPECT_EQ(error_of("threads: 1e400"), field + "expected an integer, 0 <= threads <= 10000, got \"1e400\"");
  EXPECT_EQ(error_of("threads: 2.5"), field + "expected an integer, 0 <= threads <= 10000, got \"2.5\"");
  EXPECT_EQ(error_of("threads: \"8\""), field + "expected an integer, 0 <= threads <= 10000, got \"8\"");
  const std::string measured = "name: \"x\"\nmeasurement {\n  target_ci_percent: ";
  auto measured_error = [&](const std::string& value) {
    absl::StatusOr<ParsedPlan> parsed = ParsePlan(measured + value + "\n}\n" +
                                                      "matrix {\n  strategies { name: "
                                                      "\"direct\" }\n  workloads: \"arithmetic\"\n  batch {}\n}\n",
                                                  PlanFormat::kText, "m.txtpb");
    return parsed.ok() ? std::string("OK") : std::string(parsed.status().message());
  };
  EXPECT_THAT(measured_error("lots"), ::testing::MatchesRegex("m\\.txtpb:3:3: plan\\.measurement\\.target_ci_percent: "
                                                              "expected a number, .* <= target_ci_percent <= .*, got "
                                                              "\"lots\""));
  EXPECT_THAT(measured_error("1e400"), ::testing::MatchesRegex("m\\.txtpb:3:3: plan\\.measurement\\.target_ci_percent: "
                                                               ".* <= target_ci_percent <= .*, got 1e400"));
  EXPECT_THAT(measured_error("-1e999"), ::testing::EndsWith(", got -1e999"));
  EXPECT_EQ(measured_error("1e300"), "OK");  // parses; validation refuses it with its range
  // Bytes: outside ASCII, control characters and NUL, each named with where it is.
  EXPECT_THAT(error_of("threads: 4\xc3\xa9"),
              ::testing::StartsWith("t.txtpb:3:45: plan.matrix[0].strategies[0]: a byte outside ASCII (0xc3)"));
  EXPECT_THAT(error_of("threads: 4\x7f"),
              ::testing::StartsWith("t.txtpb:3:45: plan.matrix[0].strategies[0]: a control character (byte 0x7f)"));
  EXPECT_THAT(error_of(std::string("threads: 4\0", 11)),
              ::testing::StartsWith("t.txtpb:3:45: plan.matrix[0].strategies[0]: a NUL byte (0x00)"));
  // A UTF-8 byte order mark is not part of the plan.
  EXPECT_TRUE(ParsePlan("\xEF\xBB\xBF" + prefix + "threads: 4" + suffix, PlanFormat::kText, "b.txtpb").ok());
}

TEST(ParsePlanTest, TypeErrorsNameTheField) {
  const std::string prefix = "name: \"x\"\nmatrix {\n  strategies { name: \"fixed_pool\" ";
  for (const auto& [value, what] :
       {std::pair<std::string, std::string>{"threads: -1", "takes a whole number >= 0, got a negative number"},
        // The type's range when validation has none to name (the plan
        // has no scenario, so threads' own rule is not reached).
        {"threads: 4294967296", "a whole number 0..4294967295, got 4294967296"},
        // Not a whole number (it said protobuf's "Expected integer, got: 1.5"); again
        // the kind, since validation does not reach threads' own rule here.
        {"threads: 1.5", "expected a whole number >= 0, got \"1.5\""},
        {"threads: \"8\"", "expected a whole number >= 0, got \"8\""},
        {"threads: nan", "expected a whole number >= 0, got \"nan\""}}) {
    absl::StatusOr<ParsedPlan> parsed = ParsePlan(prefix + value + " }\n}\n", PlanFormat::kText, "t.txtpb");
    ASSERT_FALSE(parsed.ok()) << value;
    EXPECT_THAT(parsed.status().message(), HasSubstr("t.txtpb:3:44: plan.matrix[0].strategies[0].threads: ")) << value;
    EXPECT_THAT(parsed.status().message(), HasSubstr(what)) << value;
  }
  absl::StatusOr<ParsedPlan> parsed =
      ParsePlan("matrix { strategies { name: \"direct\" } load { ramp_seconds: -1 } }", PlanFormat::kText, "l.txtpb");
  EXPECT_THAT(parsed.status().message(), HasSubstr("plan.matrix[0].load.ramp_seconds: "));
  parsed = ParsePlan("matrix { strategies [{ name: \"a\" }, { nme: \"b\" }] }", PlanFormat::kText, "u.txtpb");
  EXPECT_THAT(parsed.status().message(), HasSubstr("plan.matrix[0].strategies[1].nme: "));
  EXPECT_THAT(parsed.status().message(), HasSubstr("nme"));
}

TEST(ParsePlanTest, JsonIsStrict) {
  auto error_of = [](const std::string& json) {
    absl::StatusOr<ParsedPlan> parsed = ParsePlan(json, PlanFormat::kJson, "p.json");
    return parsed.ok() ? std::string("OK") : std::string(parsed.status().message());
  };
  EXPECT_EQ(error_of(R"({"name": "a", "name": "b"})"),
            "p.json: plan.name: duplicate key \"name\" (each field may be given once)");
  EXPECT_THAT(error_of(R"({"measurement": {"max_repetitions": 1, "maxRepetitions": 2}})"),
              HasSubstr("plan.measurement.max_repetitions: duplicate key \"maxRepetitions\""));
  EXPECT_THAT(error_of("{\"name\": \"a\",\n \"matrix\": [],\n}"), HasSubstr("p.json:3:1: invalid JSON"));
  EXPECT_EQ(error_of(R"({"matrix": [{"strategies": [{"name": "d", "threads": "8"}]}]})"),
            "p.json: plan.matrix[0].strategies[0].threads: expected an integer (uint32), got "
            "string \"8\"");
  EXPECT_THAT(error_of(R"({"matrix": {"strategies": []}})"),
              HasSubstr("plan.matrix: expected a JSON array, got an object"));
  EXPECT_THAT(error_of(R"({"matrix": [{"workloads": "arithmetic"}]})"),
              HasSubstr("plan.matrix[0].workloads: expected a JSON array"));
  EXPECT_THAT(error_of(R"({"matrix": [{"strategies": [{"threads": 1.5}]}]})"),
              HasSubstr("plan.matrix[0].strategies[0].threads: expected an integer"));
  EXPECT_THAT(error_of(R"({"matrix": [{"strategies": [{"threads": 4294967296}]}]})"), HasSubstr("out of range"));
  EXPECT_THAT(error_of(R"({"matrix": [{"batch": {"tasks": -1}}]})"), HasSubstr("out of range"));
  EXPECT_THAT(error_of(R"({"nmae": "x"})"), HasSubstr("plan: unknown field \"nmae\" (did you mean \"name\"?)"));
  EXPECT_THAT(error_of("[1]"), HasSubstr("p.json: plan: expected a JSON object"));
  EXPECT_THAT(error_of(": :"), HasSubstr("p.json:1:1: invalid JSON"));
  const std::string garbage = error_of(std::string("\x01\x1b[2J\xfd\xfe", 7));
  EXPECT_THAT(garbage, HasSubstr("invalid JSON"));
  for (char c : garbage) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << static_cast<int>(c);
  // What protobuf itself prints stays accepted: 64-bit integers as strings, camelCase
  // names, null for unset.
  EXPECT_EQ(error_of(R"({"name": null, "measurement": {"shuffleSeed": "123", "rounds": 2}})"), "OK");
}

TEST(ValidatePlanTest, ThreadsOutOfRangeNamesFieldRangeValueAndPosition) {
  const std::string text =
      "matrix {\n"
      "  strategies { name: \"direct\" }\n"
      "  strategies { name: \"fixed_pool\" }\n"
      "  strategies { name: \"fixed_pool\" threads: 20000 }\n"
      "  workloads: \"arithmetic\"\n"
      "  batch {}\n"
      "}\n";
  EXPECT_EQ(ValidateText(text).message(),
            "p.txtpb:4:35: plan.matrix[0].strategies[2].threads: 0 <= threads <= 10000, got "
            "20000");
}

TEST(ValidatePlanTest, RejectsUnknownNames) {
  absl::Status s = ValidateText(WithStrategy("name: \"green_threads\""));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("p.txtpb:2:16: plan.matrix[0].strategies[0].name: one of "
                                     "direct, single_thread,"));
  EXPECT_THAT(s.message(), HasSubstr("got \"green_threads\""));
  // A typo gets the closest names (suggest.h).
  EXPECT_THAT(ValidateText(WithStrategy("name: \"fibre\"")).message(),
              HasSubstr("got \"fibre\" (did you mean \"fiber\"?)"));
  EXPECT_THAT(ValidateText("matrix { strategies { name: 'direct' } workloads: 'synthetc' batch {} }").message(),
              HasSubstr("got \"synthetc\" (did you mean \"synthetic\"?)"));
  EXPECT_THAT(ValidateText("matrix { strategies { name: 'direct' } workloads: 'arithmetic' io_modes: 'blockng' "
                           "batch {} }")
                  .message(),
              HasSubstr("got \"blockng\" (did you mean \"blocking\"?)"));

  s = ValidateText(
      "matrix { strategies { name: 'direct' } workloads: ['arithmetic', 'gpu'] "
      "batch {} }");
  EXPECT_THAT(s.message(), HasSubstr("plan.matrix[0].workloads[1]: one of arithmetic"));
  EXPECT_THAT(s.message(), HasSubstr("got \"gpu\""));

  s = ValidateText(
      "matrix { strategies { name: 'direct' } workloads: 'arithmetic' "
      "io_modes: 'polling' batch {} }");
  EXPECT_THAT(s.message(), HasSubstr("plan.matrix[0].io_modes[0]: one of blocking, suspending"));

  s = ValidateText(
      "matrix { strategies { name: 'direct' } workloads: 'arithmetic' "
      "placements: 'cpus:3-1' batch {} }");
  EXPECT_THAT(s.message(), HasSubstr("plan.matrix[0].placements[0]"));
}

TEST(ValidatePlanTest, RejectsOutOfRangeNumbers) {
  EXPECT_THAT(ValidateText("matrix { strategies { name: 'direct' } workloads: 'arithmetic' "
                           "batch { tasks: 1000001 } }")
                  .message(),
              HasSubstr("plan.matrix[0].batch.tasks: 0 <= tasks <= 1000000, got 1000001"));
  EXPECT_THAT(ValidateText(WithStrategy("name: 'fixed_pool' stack_kib: 2000000")).message(),
              HasSubstr("strategies[0].stack_kib"));
  EXPECT_THAT(ValidateText("matrix { strategies { name: 'direct' } fanout { requests: 200000 } }").message(),
              HasSubstr("plan.matrix[0].fanout.requests: 0 <= requests <= 100000, got 200000"));
  EXPECT_THAT(ValidateText("matrix { strategies { name: 'direct' } memory { task_counts: [10, 0] } }").message(),
              HasSubstr("plan.matrix[0].memory.task_counts[1]: 1 <= task_counts <= 1000000, got 0"));
  EXPECT_THAT(ValidateText("matrix { strategies { name: 'direct' } load { users: 100001 } }").message(),
              HasSubstr("plan.matrix[0].load.users"));
}

TEST(ValidatePlanTest, RejectsNegativeAndNonFiniteDurations) {
  const std::string base = WithStrategy("name: 'direct'");
  absl::Status s = ValidateText(base + "measurement { warmup_seconds: -1 }");
  EXPECT_THAT(s.message(), HasSubstr("p.txtpb:6:"));
  EXPECT_THAT(s.message(), HasSubstr("plan.measurement.warmup_seconds: 0 <= warmup_seconds <= 3600 "
                                     "(seconds), got -1"));
  EXPECT_THAT(ValidateText(base + "measurement { max_seconds_per_case: nan }").message(),
              HasSubstr("plan.measurement.max_seconds_per_case"));
  EXPECT_THAT(ValidateText(base + "quick { cooldown_seconds: -0.5 }").message(),
              HasSubstr("plan.quick.cooldown_seconds"));
  EXPECT_THAT(ValidateText(base + "measurement { max_seconds_per_case: 100000 }").message(), HasSubstr("<= 86400"));
  EXPECT_THAT(ValidateText(base + "measurement { target_ci_percent: 150 }").message(),
              HasSubstr("plan.measurement.target_ci_percent"));
}

TEST(ValidatePlanTest, ProcessesNamesTheFieldAndItsRange) {
  const std::string base = WithStrategy("name: 'direct'");
  EXPECT_TRUE(ValidateText(base + "measurement { processes: 64 } quick { processes: 1 }").ok());
  absl::Status s = ValidateText(base + "measurement { processes: 65 }");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("plan.measurement.processes: 1 <= processes <= 64 (0 = default 3; batch "
                                     "cases get at least 3), got 65"));
  EXPECT_THAT(ValidateText(base + "quick { processes: 1000 }").message(),
              HasSubstr("plan.quick.processes: 1 <= processes <= 64"));
  EXPECT_TRUE(ValidateText(base + "measurement { max_processes: 64 }").ok());
  EXPECT_THAT(ValidateText(base + "quick { max_processes: 65 }").message(),
              HasSubstr("plan.quick.max_processes: 0 <= max_processes <= 64 (0 = default 16, 6 under --quick), "
                        "got 65"));
}

// --quick keeps the plan's processes (the runner raises batch cases to 3 in every mode)
// and lowers the racing cap to 6 unless `quick` sets one.
TEST(ApplyQuickTest, KeepsProcessesAndLowersTheRacingCap) {
  absl::StatusOr<ParsedPlan> parsed =
      ParsePlan(WithStrategy("name: 'direct'") + "measurement { processes: 5 }", PlanFormat::kText);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(ResolveMeasurement(parsed->plan.measurement()).processes(), 5u);
  EXPECT_EQ(ResolveMeasurement(parsed->plan.measurement()).max_processes(), 16u);
  EXPECT_EQ(ResolveMeasurement(ApplyQuick(parsed->plan).measurement()).processes(), 5u);
  EXPECT_EQ(ResolveMeasurement(ApplyQuick(parsed->plan).measurement()).max_processes(), 6u);
  parsed->plan.mutable_quick()->set_processes(4);
  parsed->plan.mutable_quick()->set_max_processes(8);
  EXPECT_EQ(ResolveMeasurement(ApplyQuick(parsed->plan).measurement()).processes(), 4u);
  EXPECT_EQ(ResolveMeasurement(ApplyQuick(parsed->plan).measurement()).max_processes(), 8u);
}

TEST(ValidatePlanTest, RejectsIncoherentPlans) {
  EXPECT_THAT(ValidateText("name: 'empty'").message(), HasSubstr("plan.matrix: at least one matrix block is required"));
  EXPECT_THAT(ValidateText("matrix { strategies { name: 'direct' } workloads: 'arithmetic' }").message(),
              HasSubstr("plan.matrix[0]: a scenario is required"));
  EXPECT_THAT(ValidateText("matrix { workloads: 'arithmetic' batch {} }").message(),
              HasSubstr("plan.matrix[0].strategies: at least one strategy"));
  EXPECT_THAT(ValidateText("matrix { strategies { name: 'direct' } batch {} }").message(),
              HasSubstr("plan.matrix[0].workloads: the batch scenario needs"));
  EXPECT_THAT(ValidateText(WithStrategy("name: 'direct'") + "measurement { min_repetitions: 50 max_repetitions: 20 }")
                  .message(),
              HasSubstr("plan.measurement.min_repetitions: min_repetitions <= max_repetitions"));
  // A default minimum (10) adapts to a small explicit maximum, as the stop rule does.
  EXPECT_TRUE(ValidateText(WithStrategy("name: 'direct'") + "measurement { max_repetitions: 3 }").ok());
  EXPECT_THAT(ValidateText(WithStrategy("name: 'direct' label: 'a/b'")).message(), HasSubstr("strategies[0].label"));
}

TEST(ValidatePlanTest, RejectsDuplicateCaseIds) {
  absl::Status s = ValidateText(
      "matrix {\n strategies { name: 'fixed_pool' threads: 4 }\n"
      " strategies { name: 'fixed_pool' threads: 8 label: 'fixed_pool_4' }\n"
      " workloads: 'arithmetic' batch {} }");
  EXPECT_THAT(s.message(), HasSubstr("p.txtpb:3:2: plan.matrix[0].strategies[1]: repeats "
                                     "plan.matrix[0].strategies[0] (both give case id "
                                     "\"batch/arithmetic/blocking/fixed_pool_4/any\")"));
  // The repeated element is named, whichever list it is in.
  s = ValidateText(
      "matrix {\n strategies { name: 'direct' }\n"
      " workloads: ['arithmetic', 'storage', 'arithmetic'] batch {} }");
  EXPECT_THAT(s.message(), HasSubstr("p.txtpb:3:39: plan.matrix[0].workloads[2]: repeats "
                                     "plan.matrix[0].workloads[0]"));
  s = ValidateText(
      "matrix { strategies { name: 'direct' } workloads: 'arithmetic' batch {}\n"
      " io_modes: ['blocking', 'blocking'] }");
  EXPECT_THAT(s.message(), HasSubstr("plan.matrix[0].io_modes[1]: repeats plan.matrix[0].io_modes[0]"));
  s = ValidateText(
      "matrix { strategies { name: 'direct' } workloads: 'arithmetic' batch {}\n"
      " placements: ['cpus:0-1', 'cpus:0,1'] }");
  EXPECT_THAT(s.message(), HasSubstr("plan.matrix[0].placements[1]: write it as \"cpus:0-1\""));
  s = ValidateText(
      "matrix { strategies { name: 'direct' } workloads: 'arithmetic' batch {}\n"
      " placements: ['cpus:0', 'cpus:0'] }");
  EXPECT_THAT(s.message(), HasSubstr("plan.matrix[0].placements[1]: repeats plan.matrix[0].placements[0]"));
}

TEST(ValidatePlanTest, RejectsNonCanonicalPlacements) {
  for (const char* placement : {"any ", "cpus: 0", "cpus:0,0", "cpus:1,0", " one_per_core"}) {
    absl::Status s = ValidateText(std::string("matrix { strategies { name: 'direct' } workloads: "
                                              "'arithmetic' batch {} placements: '") +
                                  placement + "' }");
    EXPECT_THAT(s.message(), HasSubstr("plan.matrix[0].placements[0]")) << placement;
  }
  EXPECT_THAT(ValidateText("matrix { strategies { name: 'direct' } workloads: 'arithmetic' batch {} "
                           "placements: 'cpus:0,0' }")
                  .message(),
              HasSubstr("write it as \"cpus:0\" (canonical form), got \"cpus:0,0\""));
}

// What `fleetmark run` would only find out at run time is caught here, naming the field.
TEST(ValidatePlanTest, CatchesWhatWouldFailAtRunTime) {
  EXPECT_THAT(ValidateText(WithStrategy("name: 'fixed_pool' stack_kib: 1")).message(),
              HasSubstr("plan.matrix[0].strategies[0].stack_kib: 0 (system default) or 16 <= "
                        "stack_kib <= 1048576, got 1"));
  EXPECT_THAT(ValidateText(WithStrategy("name: 'fiber' stack_kib: 15")).message(), HasSubstr("stack_kib"));
  EXPECT_TRUE(ValidateText(WithStrategy("name: 'fiber' stack_kib: 16")).ok());
  for (const char* counts : {"[5]", "[1, 1]", "[1, 10]", "[1, 10, 10]"}) {
    absl::Status s = ValidateText(std::string("matrix { strategies { name: 'fiber' } memory { "
                                              "task_counts: ") +
                                  counts + " } }");
    EXPECT_THAT(s.message(), HasSubstr("plan.matrix[0].memory.task_counts: empty (the default "
                                       "points) or at least 3 distinct"))
        << counts;
  }
  EXPECT_TRUE(ValidateText("matrix { strategies { name: 'fiber' } memory { task_counts: [1, 10, 100] } }").ok());
  EXPECT_THAT(ValidateText("matrix { strategies { name: 'fiber' stack_kib: 64 } memory { "
                           "touch_stack_kib: 60 } }")
                  .message(),
              HasSubstr("plan.matrix[0].memory.touch_stack_kib: 0 <= touch_stack_kib <= "
                        "strategies[0].stack_kib - 8 = 56, got 60"));
  // threads on a strategy that ignores them only changed the label (direct_8).
  EXPECT_THAT(ValidateText(WithStrategy("name: 'direct' threads: 8")).message(),
              HasSubstr("plan.matrix[0].strategies[0].threads: must be 0 for direct"));
  EXPECT_THAT(ValidateText(WithStrategy("name: 'async' threads: 8")).message(), HasSubstr("must be 0 for async"));
}

// One repetition cannot be interrupted: its shortest possible time is bounded.
TEST(ValidatePlanTest, BoundsTheTimeOfOneRepetition) {
  auto plan = [](const std::string& strategy, int tasks, const std::string& extra = "") {
    return "matrix { strategies { " + strategy + " } workloads: 'network' batch { tasks: " + std::to_string(tasks) +
           " } }" + extra;
  };
  // 0 + 1 + ... + 999 ms = 499.5 s on one thread.
  absl::Status s = ValidateText(plan("name: 'direct'", 1000));
  EXPECT_THAT(s.message(), HasSubstr("plan.matrix[0].batch.tasks: one repetition of "
                                     "network/blocking/direct with 1000 tasks waits at least 8m19s"));
  EXPECT_THAT(s.message(), HasSubstr("= 60 s"));
  // A million tasks: the longest single wait alone is 1000 s, whatever the threads.
  EXPECT_THAT(ValidateText(plan("name: 'thread_per_task'", 1000000)).message(), HasSubstr("waits at least 16m39s"));
  EXPECT_THAT(ValidateText(plan("name: 'coroutine' threads: 2", 1000000) +
                           " matrix { strategies { name: 'direct' } workloads: 'arithmetic' batch {} }")
                  .message(),
              HasSubstr("batch.tasks"));
  // Enough threads, or an explicit budget, make it valid; so does --quick's small budget
  // for a repetition that fits the 60 s allowance (S1's direct/network, ~5 s).
  EXPECT_TRUE(ValidateText(plan("name: 'fixed_pool' threads: 100", 1000)).ok());
  EXPECT_TRUE(ValidateText(plan("name: 'direct'", 1000, " measurement { max_seconds_per_case: 600 }")).ok());
  EXPECT_TRUE(ValidateText(plan("name: 'direct'", 100, " quick { max_seconds_per_case: 0.4 }")).ok());
  // The quick form is checked with its own budget.
  EXPECT_THAT(ValidateText(plan("name: 'direct'", 1000,
                                " measurement { max_seconds_per_case: 600 } quick { max_seconds_per_case: 1 }"))
                  .message(),
              HasSubstr("quick.max_seconds_per_case"));
}

TEST(ValidatePlanTest, NameAndDescriptionArePrintableAndBounded) {
  const std::string body = WithStrategy("name: 'direct'");
  EXPECT_THAT(ValidateText("name: \"a\\033[2Jb\"\n" + body).message(),
              HasSubstr("p.txtpb:1:1: plan.name: printable text only"));
  EXPECT_THAT(ValidateText("name: \"a\\nb\"\n" + body).message(), HasSubstr("plan.name"));
  EXPECT_THAT(ValidateText("name: \"" + std::string(129, 'n') + "\"\n" + body).message(),
              HasSubstr("plan.name: at most 128 bytes, got 129"));
  EXPECT_THAT(ValidateText("description: \"a\\x07\"\n" + body).message(),
              HasSubstr("plan.description: printable text only"));
  EXPECT_THAT(ValidateText("name: \"a\\xc2\\x9bb\"\n" + body).message(),  // C1 CSI
              HasSubstr("plan.name"));
  EXPECT_TRUE(ValidateText("name: \"s1 – études\" description: \"two\\nlines\\tok\"\n" + body).ok());
  // A right-to-left override (U+202E, UTF-8 E2 80 AE) shows "ab\u202ecd" as "abdc".
  EXPECT_THAT(ValidateText("name: \"ab\\342\\200\\256cd\"\n" + body).message(),
              HasSubstr("plan.name: printable text only"));
  EXPECT_THAT(ValidateText("description: \"x\\342\\201\\247y\"\n" + body).message(),  // U+2067
              HasSubstr("bidirectional control U+2067 at byte 1"));
}

// Every string field must be UTF-8 (proto3's rule, which the coordinator's and the
// agent's parsers enforce): an invalid byte sequence is named, not sent to fail there.
TEST(ValidatePlanTest, EveryStringFieldIsValidUtf8) {
  const std::string body = WithStrategy("name: 'direct'");
  EXPECT_THAT(ValidateText("name: \"\\303\\050\"\n" + body).message(),
              HasSubstr("p.txtpb:1:1: plan.name: valid UTF-8 text only, got \"\\xc3(\""));
  EXPECT_THAT(ValidateText("description: \"ok \\377\"\n" + body).message(),
              HasSubstr("plan.description: valid UTF-8 text only"));
  // Nested and repeated fields, including ones checked against the registry later, and
  // a label (which has no other check that would catch it first).
  EXPECT_THAT(ValidateText(WithStrategy("name: 'direct' label: \"x\\300\\200\"")).message(),
              HasSubstr("plan.matrix[0].strategies[0].label: valid UTF-8 text only"));
  EXPECT_THAT(
      ValidateText("matrix { strategies { name: 'direct' } workloads: ['arithmetic', \"\\355\\240\\200\"] batch {} }")
          .message(),
      HasSubstr("plan.matrix[0].workloads[1]: valid UTF-8 text only"));  // a surrogate
  EXPECT_TRUE(ValidateText("name: \"\\303\\251tudes \\360\\237\\232\\200\"\n" + body).ok());
  // Valid text in an error is quoted as it is (no octal escapes of a CJK name).
  EXPECT_THAT(ValidateText(WithStrategy("name: '日本'")).message(), HasSubstr("got \"日本\""));
}

TEST(ValidatePlanTest, ChecksTheQuickFormToo) {
  absl::Status s = ValidateText(WithStrategy("name: 'direct'") +
                                "quick_matrix { strategies { name: 'nope' } workloads: "
                                "'arithmetic' batch {} }");
  EXPECT_THAT(s.message(), HasSubstr("plan.quick_matrix[0].strategies[0].name"));
}

TEST(ApplyQuickTest, OverridesSetFieldsAndReplacesTheMatrix) {
  absl::StatusOr<ParsedPlan> parsed =
      ParsePlan(std::string(kTinyPlan) +
                    "measurement { warmup_seconds: 2 max_repetitions: 500 rounds: 4 }\n"
                    "quick { max_repetitions: 20 include_setup: true }\n"
                    "quick_matrix { strategies { name: 'direct' } workloads: 'network' batch {} }\n",
                PlanFormat::kText);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_TRUE(ValidatePlan(*parsed).ok()) << ValidatePlan(*parsed);
  v1::Plan quick = ApplyQuick(parsed->plan);
  EXPECT_EQ(quick.measurement().warmup_seconds(), 2);
  EXPECT_EQ(quick.measurement().max_repetitions(), 20u);
  EXPECT_EQ(quick.measurement().rounds(), 4u);
  EXPECT_TRUE(quick.measurement().include_setup());
  EXPECT_EQ(quick.matrix_size(), 1);
  EXPECT_EQ(quick.quick_matrix_size(), 0);
  EXPECT_EQ(ExpandCases(parsed->plan, true).size(), 1u);
  EXPECT_EQ(ExpandCases(parsed->plan, false).size(), 12u);
}

TEST(S1PlanTest, ValidatesAndCoversTheStudyMatrix) {
  absl::StatusOr<ParsedPlan> parsed = LoadPlanFile(std::string(FLEETMARK_SOURCE_DIR) + "/plans/s1-frameworks.txtpb");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_TRUE(ValidatePlan(*parsed).ok()) << ValidatePlan(*parsed);
  std::vector<v1::CaseSpec> cases = ExpandCases(parsed->plan, false);
  // 18 strategies × 5 workloads × 2 io modes.
  EXPECT_EQ(cases.size(), 180u);
  std::set<std::string> workloads, strategies;
  for (const auto& c : cases) {
    workloads.insert(c.workload());
    strategies.insert(c.strategy().name());
    EXPECT_EQ(c.batch().tasks(), 100u);
  }
  EXPECT_EQ(workloads.size(), 5u);
  EXPECT_EQ(strategies.size(), kStrategies.size());  // every registry strategy
  v1::MeasurementSettings quick = ResolveMeasurement(ApplyQuick(parsed->plan).measurement());
  EXPECT_LE(quick.max_seconds_per_case(), 1.0);
}

}  // namespace
}  // namespace fleetmark::engine
