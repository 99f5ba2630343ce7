// JSON (parsed back with protobuf), CSV (parsed back by a small RFC 4180 parser) and
// gbench-json structure; format names.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/time/time.h"
#include "engine/report/csv.h"
#include "engine/report/gbench_json.h"
#include "engine/report/json.h"
#include "engine/report/report.h"
#include "engine/report/results_document.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "sample_report.h"

namespace fleetmark::report {
namespace {

// RFC 4180 parser: records separated by CRLF, fields by commas, quoted fields may
// hold commas, CR/LF and doubled quotes. Returns false on malformed input.
bool ParseCsv(const std::string& text, std::vector<std::vector<std::string>>* rows) {
  rows->clear();
  std::vector<std::string> row;
  std::string field;
  size_t i = 0;
  bool quoted = false, field_started = false;
  while (i < text.size()) {
    const char c = text[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          i += 2;
          continue;
        }
        quoted = false;
        ++i;
        if (i < text.size() && text[i] != ',' && text[i] != '\r') return false;
        continue;
      }
      field += c;
      ++i;
      continue;
    }
    if (c == '"') {
      if (field_started) return false;  // a quote inside an unquoted field
      quoted = field_started = true;
      ++i;
    } else if (c == ',') {
      row.push_back(field);
      field.clear();
      field_started = false;
      ++i;
    } else if (c == '\r') {
      if (i + 1 >= text.size() || text[i + 1] != '\n') return false;
      row.push_back(field);
      rows->push_back(row);
      row.clear();
      field.clear();
      field_started = false;
      i += 2;
    } else if (c == '\n') {
      return false;  // bare LF outside quotes
    } else {
      field += c;
      field_started = true;
      ++i;
    }
  }
  return !quoted && row.empty() && field.empty();
}

TEST(FormatNamesTest, ParseAndName) {
  for (const auto name : kReportFormatNames) {
    const absl::StatusOr<ReportFormat> f = ParseReportFormat(name);
    ASSERT_TRUE(f.ok()) << f.status();
    EXPECT_EQ(ReportFormatName(*f), name);
  }
  const absl::Status bad = ParseReportFormat("xml").status();
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("--format: got 'xml', allowed table|json|csv|gbench-json"), std::string::npos) << bad;
}

TEST(JsonTest, RoundTripsThroughProtobuf) {
  fleetmark::v1::RunReport report = testing::SampleReport();
  // Non-finite values (the CI half-width of a small sample) must survive too.
  report.mutable_results(0)->mutable_stats()->set_ci_half_width_percent(std::numeric_limits<double>::infinity());
  const absl::StatusOr<std::string> json = FormatJson(report);
  ASSERT_TRUE(json.ok()) << json.status();
  // The results schema (docs/results-schema.md): snake_case, versioned, one device.
  const nlohmann::json doc = nlohmann::json::parse(*json);
  EXPECT_EQ(doc["schema_version"], 1);
  EXPECT_EQ(doc["source"], "local");
  EXPECT_EQ(doc["run"]["plan_name"], "s1-test");
  ASSERT_EQ(doc["devices"].size(), 1u);
  EXPECT_EQ(doc["devices"][0]["agent"], LocalAgentName(report.host()));
  EXPECT_TRUE(doc["devices"][0]["results"][0].contains("result_id"));
  EXPECT_EQ(json->find("planName"), std::string::npos);
  EXPECT_EQ(json->find("resultId"), std::string::npos);
  EXPECT_NE(json->find("\"CASE_STATUS_UNSUPPORTED\""), std::string::npos);
  const absl::StatusOr<fleetmark::v1::RunReport> back = ParseJson(*json);
  ASSERT_TRUE(back.ok()) << back.status();
  std::string diff;
  google::protobuf::util::MessageDifferencer differencer;
  differencer.ReportDifferencesToString(&diff);
  EXPECT_TRUE(differencer.Compare(report, *back)) << diff;

  const absl::StatusOr<std::string> via_dispatch = FormatReport(report, ReportFormat::kJson);
  ASSERT_TRUE(via_dispatch.ok());
  EXPECT_EQ(*via_dispatch, *json);
}

// A file `fleetmark run --format json` wrote before the schema (a RunReport in
// protobuf's camelCase JSON) still reads, as a local document of one device.
TEST(JsonTest, ReadsThePreSchemaRunReport) {
  const fleetmark::v1::RunReport report = testing::SampleReport();
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  std::string old_json;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(report, &old_json, options).ok());
  ASSERT_NE(old_json.find("\"planName\""), std::string::npos);
  const absl::StatusOr<fleetmark::v1::ResultsDocument> doc = ParseResultsJson(old_json);
  ASSERT_TRUE(doc.ok()) << doc.status();
  EXPECT_EQ(doc->schema_version(), 0u);
  EXPECT_EQ(doc->source(), "local");
  ASSERT_EQ(doc->devices_size(), 1);
  EXPECT_EQ(doc->devices(0).results_size(), report.results_size());
  const absl::StatusOr<fleetmark::v1::RunReport> back = ParseJson(old_json);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(report, *back));
}

TEST(JsonTest, RefusesANewerSchemaVersionAndSeveralDevicesAsOneReport) {
  const absl::Status newer = ParseResultsJson(R"({"schema_version": 2, "source": "local"})").status();
  EXPECT_EQ(newer.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(newer.message().find("schema_version 2 is newer than this fleetmark reads (1 <= schema_version <= 1)"),
            std::string::npos)
      << newer;
  const std::string two = R"({"schema_version": 1, "source": "fleet", "devices": [{"agent": "a"}, {"agent": "b"}]})";
  ASSERT_TRUE(ParseResultsJson(two).ok());
  EXPECT_EQ(ParseResultsJson(two)->devices_size(), 2);
  EXPECT_NE(ParseJson(two).status().message().find("holds 2 devices, expected one"), std::string::npos);
}

// docs/results-schema.md: adding a field is no version bump, so readers ignore fields
// they do not know; but a value no fleetmark writes (an unknown status number, an
// infinite CI bound) is refused by every reader, as the coordinator's import refuses it.
TEST(JsonTest, ReadersIgnoreUnknownFieldsAndRefuseValuesNoFleetmarkWrites) {
  const absl::StatusOr<std::string> json = FormatJson(testing::SampleReport());
  ASSERT_TRUE(json.ok()) << json.status();
  nlohmann::json doc = nlohmann::json::parse(*json);
  doc["added_later"] = 1;
  doc["devices"][0]["results"][0]["added_later_too"] = {{"x", 1}};
  const absl::StatusOr<fleetmark::v1::ResultsDocument> read = ParseResultsJson(doc.dump());
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->devices(0).results_size(), testing::SampleReport().results_size());

  nlohmann::json bad_status = doc;
  bad_status["devices"][0]["results"][0]["status"] = 999;
  const absl::Status status = ParseResultsJson(bad_status.dump()).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr("status: one of the CaseStatus names"));
  EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr("got 999"));

  nlohmann::json bad_ci = doc;
  bad_ci["devices"][0]["results"][0]["stats"]["ci_high_ns"] = "Infinity";
  const absl::Status ci = ParseResultsJson(bad_ci.dump()).status();
  EXPECT_THAT(std::string(ci.message()), ::testing::HasSubstr("stats.ci_high_ns: a finite number >= 0, got inf"));
}

// Issue 34's second trial: a hand-made file's case without a spec was shown as
// "batch · blocking · n=100" (the defaults), and an empty case id passed. Both are
// refused by position, naming the field.
TEST(JsonTest, RefusesAResultThatNamesNoCase) {
  const absl::StatusOr<std::string> json = FormatJson(testing::SampleReport());
  ASSERT_TRUE(json.ok()) << json.status();
  const nlohmann::json doc = nlohmann::json::parse(*json);
  ASSERT_GE(doc["devices"][0]["results"].size(), 2u);

  nlohmann::json no_spec = doc;
  no_spec["devices"][0]["results"][1].erase("spec");
  const absl::Status missing = ParseResultsJson(no_spec.dump()).status();
  EXPECT_EQ(missing.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(missing.message()), ::testing::StartsWith("devices[0].results[1].spec: missing (device \""));

  nlohmann::json empty_id = doc;
  empty_id["devices"][0]["results"][0]["spec"]["case_id"] = "";
  const absl::Status empty = ParseResultsJson(empty_id.dump()).status();
  EXPECT_EQ(empty.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(empty.message()), ::testing::StartsWith("devices[0].results[0].spec.case_id: missing"));
  // Two results with empty ids: the first is named, not "given twice".
  empty_id["devices"][0]["results"][1]["spec"]["case_id"] = "";
  EXPECT_THAT(std::string(ParseResultsJson(empty_id.dump()).status().message()),
              ::testing::StartsWith("devices[0].results[0].spec.case_id: missing"));
}

// A status name this fleetmark does not know (or none): protobuf's JSON reader makes it
// the unspecified 0 without a word, and the case silently left its group's verdict (a
// new user's trial: "CASE_STATUS_BOGUS" moved a paired interval, exit 0).
TEST(JsonTest, RefusesAResultWithAnUnknownOrMissingStatus) {
  const absl::StatusOr<std::string> json = FormatJson(testing::SampleReport());
  ASSERT_TRUE(json.ok()) << json.status();
  const nlohmann::json doc = nlohmann::json::parse(*json);
  for (const bool erase : {false, true}) {
    nlohmann::json bad = doc;
    if (erase) {
      bad["devices"][0]["results"][0].erase("status");
    } else {
      bad["devices"][0]["results"][0]["status"] = "CASE_STATUS_BOGUS";
    }
    const absl::Status status = ParseResultsJson(bad.dump()).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << erase;
    EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr("status: one of CASE_STATUS_OK")) << erase;
  }
  EXPECT_TRUE(ParseResultsJson(doc.dump()).ok());
}

// A UTF-8 byte order mark (some editors write one) is not part of the file: protobuf's
// JSON parser said "a field does not fit the results schema (... Expected a value)".
TEST(JsonTest, AByteOrderMarkIsNotPartOfTheFile) {
  const absl::StatusOr<std::string> json = FormatJson(testing::SampleReport());
  ASSERT_TRUE(json.ok()) << json.status();
  const absl::StatusOr<fleetmark::v1::ResultsDocument> read = ParseResultsJson("\xEF\xBB\xBF" + *json);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->devices(0).results_size(), testing::SampleReport().results_size());
}

TEST(JsonTest, MalformedInputIsAnError) {
  EXPECT_EQ(ParseJson("{").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(ParseJson("{\"noSuchField\": 1}").ok());
  EXPECT_FALSE(ParseJson("[1, 2]").ok());
}

TEST(CsvTest, FieldQuotingPerRfc4180) {
  EXPECT_EQ(CsvField("plain"), "plain");
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvField("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(CsvField("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(CsvField(""), "");
}

TEST(CsvTest, ParsesBackOneRowPerCase) {
  fleetmark::v1::RunReport report = testing::SampleReport();
  report.mutable_results(3)->set_message("line one\r\nline \"two\", with comma");
  const std::string csv = FormatCsv(report);
  std::vector<std::vector<std::string>> rows;
  ASSERT_TRUE(ParseCsv(csv, &rows)) << csv;
  ASSERT_EQ(rows.size(), 1u + report.results_size());
  EXPECT_EQ(rows[0], CsvColumns());
  auto col = [&](const std::string& name) {
    for (size_t i = 0; i < rows[0].size(); ++i) {
      if (rows[0][i] == name) return i;
    }
    ADD_FAILURE() << "no column " << name;
    return size_t{0};
  };
  for (size_t r = 1; r < rows.size(); ++r) ASSERT_EQ(rows[r].size(), rows[0].size()) << r;
  // The device first, as in a fleet export (the results schema's "agent").
  EXPECT_EQ(rows[0][0], "agent");
  EXPECT_EQ(rows[1][0], LocalAgentName(report.host()));
  for (const char* newer : {"fingerprint_hash", "conditions_start", "conditions_end", "harness_ns_per_task", "wait_us",
                            "memory_left_out_tasks", "partial"}) {
    col(newer);
  }
  EXPECT_EQ(rows[0].back(), "emulated");
  // Values parse back exactly.
  EXPECT_EQ(rows[1][col("strategy")], "fixed_pool");
  EXPECT_EQ(rows[1][col("strategy_label")], "fixed_pool_2");
  EXPECT_EQ(rows[1][col("status")], "ok");
  EXPECT_EQ(rows[1][col("stop_reason")], "ci_target");
  double median = 0;
  ASSERT_TRUE(absl::SimpleAtod(rows[1][col("median_ns")], &median));
  EXPECT_EQ(median, report.results(0).stats().median_ns());
  double ci_high = 0;
  ASSERT_TRUE(absl::SimpleAtod(rows[1][col("ci_high_ns")], &ci_high));
  EXPECT_EQ(ci_high, report.results(0).stats().ci_high_ns());
  EXPECT_EQ(rows[1][col("allocations_per_repetition")], "250");
  EXPECT_EQ(rows[3][col("allocations_per_repetition")], "");  // not counted
  EXPECT_EQ(rows[3][col("throttled")], "true");
  EXPECT_EQ(rows[4][col("status")], "unsupported");
  EXPECT_EQ(rows[4][col("message")], "line one\r\nline \"two\", with comma");
  EXPECT_EQ(rows[6][col("strategy_label")], "fixed_pool_cpu, small");
  EXPECT_EQ(rows[7][col("memory_slope_kib_per_task")], "64");
  // A memory case has no timing statistics nor batch size: empty, not 0.
  for (const char* empty : {"median_ns", "count", "min_ns", "ci_half_width_percent", "tasks", "stop_reason"}) {
    EXPECT_EQ(rows[7][col(empty)], "") << empty;
  }
  EXPECT_EQ(rows[4][col("median_ns")], "");  // unsupported: nothing measured
  EXPECT_EQ(rows[9][col("fanout_timeouts")], "5");
  EXPECT_EQ(rows[10][col("load_throughput_rps")], "1834.25");
}

TEST(GbenchJsonTest, StructureFollowsGoogleBenchmark) {
  const fleetmark::v1::RunReport report = testing::SampleReport();
  const std::string text =
      FormatGbenchJson(report, GbenchOptions{.now = absl::FromUnixSeconds(1700000000), .time_unit = "us"});
  const nlohmann::json doc = nlohmann::json::parse(text);
  const auto& ctx = doc.at("context");
  EXPECT_EQ(ctx.at("date"), "2023-11-14T22:13:20+00:00");
  EXPECT_EQ(ctx.at("host_name"), "testhost");
  EXPECT_EQ(ctx.at("num_cpus"), 2);
  EXPECT_EQ(ctx.at("mhz_per_cpu"), 3000);
  EXPECT_EQ(ctx.at("cpu_scaling_enabled"), true);
  ASSERT_EQ(ctx.at("caches").size(), 1u);  // two instances of one cache, deduplicated
  EXPECT_EQ(ctx.at("caches")[0].at("type"), "Data");
  EXPECT_EQ(ctx.at("caches")[0].at("size"), 32768);
  EXPECT_EQ(ctx.at("load_avg")[0], 0.5);

  // 5 OK batch cases × (10 samples + 4 aggregates); the unsupported, memory, fanout and
  // load cases one error entry each (Google Benchmark's error_occurred/error_message).
  const auto& b = doc.at("benchmarks");
  ASSERT_EQ(b.size(), 5u * 14 + 5);
  int errors = 0;
  for (const auto& e : b) {
    if (!e.value("error_occurred", false)) continue;
    ++errors;
    EXPECT_FALSE(e.at("error_message").get<std::string>().empty()) << e.dump();
    EXPECT_EQ(e.at("iterations"), 0);
    EXPECT_EQ(e.at("run_type"), "iteration");
  }
  EXPECT_EQ(errors, 5);
  EXPECT_EQ(b[42].at("error_occurred"), true);
  EXPECT_EQ(b[42].at("name"), "batch/arithmetic/blocking/fiber/any");
  EXPECT_EQ(b[42].at("error_message").get<std::string>().rfind("unsupported: ", 0), 0u);
  const auto& first = b[0];
  EXPECT_EQ(first.at("name"), "batch/arithmetic/blocking/fixed_pool/any");
  EXPECT_EQ(first.at("run_name"), first.at("name"));
  EXPECT_EQ(first.at("run_type"), "iteration");
  EXPECT_EQ(first.at("repetitions"), 10);
  EXPECT_EQ(first.at("repetition_index"), 0);
  EXPECT_EQ(first.at("threads"), 2);
  EXPECT_EQ(first.at("iterations"), 1);
  EXPECT_EQ(first.at("time_unit"), "us");
  EXPECT_DOUBLE_EQ(first.at("real_time").get<double>(), 4.0);  // 4000 ns in µs
  EXPECT_DOUBLE_EQ(first.at("cpu_time").get<double>(), 2.4);
  const auto& mean = b[10];
  EXPECT_EQ(mean.at("name"), "batch/arithmetic/blocking/fixed_pool/any_mean");
  EXPECT_EQ(mean.at("run_type"), "aggregate");
  EXPECT_EQ(mean.at("aggregate_name"), "mean");
  EXPECT_EQ(mean.at("iterations"), 10);
  const auto& median = b[11];
  EXPECT_EQ(median.at("aggregate_name"), "median");
  EXPECT_DOUBLE_EQ(median.at("real_time").get<double>(), 4.04);  // sorted samples 4,4,4,4,4.04,...
  EXPECT_EQ(b[13].at("aggregate_unit"), "percentage");
  EXPECT_EQ(b[14].at("family_index"), 1);
  // direct used 0 threads (the caller): gbench's minimum is 1.
  EXPECT_EQ(b[14].at("threads"), 1);

  const std::string aggregates_only = FormatGbenchJson(report, GbenchOptions{.per_sample_entries = false});
  EXPECT_EQ(nlohmann::json::parse(aggregates_only).at("benchmarks").size(), 5u * 4 + 5);
}

TEST(GbenchJsonTest, EmptyReportIsStillValid) {
  const nlohmann::json doc = nlohmann::json::parse(FormatGbenchJson({}));
  EXPECT_TRUE(doc.at("benchmarks").empty());
  EXPECT_EQ(doc.at("context").at("num_cpus"), 0);
}

}  // namespace
}  // namespace fleetmark::report

namespace fleetmark::report {
namespace {

// measurement.processes >= 2 and the stationarity check: per-process medians, sample
// counts and the between-process share, and unstable / transient_samples, in CSV and
// gbench-json (issue 13, items 6 and 7).
fleetmark::v1::RunReport ProcessReport() {
  fleetmark::v1::RunReport report;
  fleetmark::v1::CaseResult r = testing::BatchCase("fixed_pool", 2, "arithmetic", 4000, 9);
  for (double m : {4000.0, 4040.0, 3960.0}) r.add_process_medians_ns(m);
  for (uint32_t n : {3u, 3u, 3u}) r.add_process_sample_counts(n);
  r.set_between_process_share(0.25);
  r.set_unstable(true);
  r.set_transient_samples(17);
  r.set_harness_ns_per_task(12.5);
  r.set_harness_share(0.3125);
  r.set_harness_heavy(true);
  *report.add_results() = r;
  *report.add_results() = testing::BatchCase("direct", 0, "arithmetic", 2000);  // one process
  return report;
}

TEST(CsvTest, CarriesTheProcessLevelAndStationarityFields) {
  std::vector<std::vector<std::string>> rows;
  ASSERT_TRUE(ParseCsv(FormatCsv(ProcessReport()), &rows));
  ASSERT_EQ(rows.size(), 3u);
  auto col = [&](const std::string& name) {
    for (size_t i = 0; i < rows[0].size(); ++i) {
      if (rows[0][i] == name) return i;
    }
    ADD_FAILURE() << "no column " << name;
    return size_t{0};
  };
  EXPECT_EQ(rows[1][col("process_medians_ns")], "4000;4040;3960");
  EXPECT_EQ(rows[1][col("process_sample_counts")], "3;3;3");
  EXPECT_EQ(rows[1][col("between_process_share")], "0.25");
  EXPECT_EQ(rows[1][col("unstable")], "true");
  EXPECT_EQ(rows[1][col("transient_samples")], "17");
  EXPECT_EQ(rows[1][col("harness_ns_per_task")], "12.5");
  EXPECT_EQ(rows[1][col("harness_share")], "0.3125");
  EXPECT_EQ(rows[1][col("harness_heavy")], "true");
  // One process: no process-level fields (empty, not 0).
  EXPECT_EQ(rows[2][col("process_medians_ns")], "");
  EXPECT_EQ(rows[2][col("between_process_share")], "");
  EXPECT_EQ(rows[2][col("unstable")], "false");
  EXPECT_EQ(rows[2][col("transient_samples")], "0");
  // Not calibrated: empty, not 0.
  EXPECT_EQ(rows[2][col("harness_ns_per_task")], "");
  EXPECT_EQ(rows[2][col("harness_share")], "");
  EXPECT_EQ(rows[2][col("harness_heavy")], "false");
}

TEST(GbenchJsonTest, AggregatesCarryTheProcessLevelFields) {
  const nlohmann::json doc = nlohmann::json::parse(FormatGbenchJson(ProcessReport(), GbenchOptions{.time_unit = "us"}));
  const auto& b = doc.at("benchmarks");
  ASSERT_EQ(b.size(), 9u + 4 + 10 + 4);
  const auto& median = b[10];
  ASSERT_EQ(median.at("aggregate_name"), "median");
  EXPECT_EQ(median.at("fleetmark_process_medians"), nlohmann::json({4.0, 4.04, 3.96}));
  EXPECT_EQ(median.at("fleetmark_process_sample_counts"), nlohmann::json({3, 3, 3}));
  EXPECT_DOUBLE_EQ(median.at("fleetmark_between_process_share").get<double>(), 0.25);
  EXPECT_EQ(median.at("fleetmark_unstable"), true);
  EXPECT_EQ(median.at("fleetmark_transient_samples"), 17);
  EXPECT_DOUBLE_EQ(median.at("fleetmark_harness_per_task").get<double>(), 0.0125);  // us
  EXPECT_DOUBLE_EQ(median.at("fleetmark_harness_share").get<double>(), 0.3125);
  EXPECT_EQ(median.at("fleetmark_harness_heavy"), true);
  // Iteration entries stay as Google Benchmark writes them; one-process cases have none.
  EXPECT_FALSE(b[0].contains("fleetmark_process_medians"));
  EXPECT_FALSE(b[9 + 4 + 10 + 1].contains("fleetmark_process_medians"));
  EXPECT_FALSE(b[9 + 4 + 10 + 1].contains("fleetmark_unstable"));
  EXPECT_FALSE(b[9 + 4 + 10 + 1].contains("fleetmark_harness_per_task"));
}

}  // namespace
}  // namespace fleetmark::report
