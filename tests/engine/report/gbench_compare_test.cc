// gbench-json exports read by Google Benchmark's own compare.py (Debian
// libbenchmark-tools + python3-scipy): two exports of the same cases, B 2× slower
// than A, must compare with the case names listed and a +100% time change.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/report/gbench_json.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "sample_report.h"

namespace fleetmark::report {
namespace {

constexpr char kPython[] = "/usr/bin/python3";
constexpr char kComparePy[] = "/usr/share/benchmark/compare.py";

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

CommandResult RunCommand(const std::string& command) {
  CommandResult result;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return result;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) result.output.append(buf, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::string TempDir() {
  char tmpl[] = "/tmp/fleetmark-gbench-XXXXXX";
  const char* dir = mkdtemp(tmpl);
  return dir == nullptr ? std::string() : std::string(dir);
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

// A report of two batch cases with 12 samples each, times scaled by `factor`.
fleetmark::v1::RunReport Scaled(int64_t factor) {
  fleetmark::v1::RunReport report;
  report.set_plan_name("compare");
  report.mutable_host()->set_logical_cpus(2);
  *report.add_results() = testing::BatchCase("fixed_pool", 2, "arithmetic", 40000 * factor, 12);
  *report.add_results() = testing::BatchCase("direct", 0, "storage", 2'000'000 * factor, 12);
  return report;
}

TEST(GbenchCompareTest, ComparePyReadsTwoExportsAndSeesTheSlowdown) {
  ASSERT_EQ(access(kComparePy, R_OK), 0) << kComparePy
                                         << " is missing: install libbenchmark-tools (deploy/install-deps.sh test)";
  const std::string dir = TempDir();
  ASSERT_FALSE(dir.empty());
  const std::string a = dir + "/A.json", b = dir + "/B.json", dump = dir + "/diff.json";
  WriteFile(a, FormatGbenchJson(Scaled(1)));
  WriteFile(b, FormatGbenchJson(Scaled(2)));

  const CommandResult r =
      RunCommand(absl::StrCat(kPython, " ", kComparePy, " --no-color -d ", dump, " benchmarks ", a, " ", b));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("Comparing " + a + " to " + b), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("batch/arithmetic/blocking/fixed_pool/any"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("batch/storage/blocking/direct/any_median"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("+1.0000"), std::string::npos) << r.output;  // 2× = +100%
  EXPECT_EQ(r.output.find("-0."), std::string::npos) << r.output;      // nothing got faster
  // 12 repetitions: enough for compare.py's Mann-Whitney U test.
  EXPECT_NE(r.output.find("U Test"), std::string::npos) << r.output;

  std::ifstream in(dump);
  const nlohmann::json diff = nlohmann::json::parse(in);
  int compared = 0;
  for (const auto& entry : diff) {
    const std::string name = entry.at("name");
    if (name == "OVERALL_GEOMEAN") continue;
    ++compared;
    for (const auto& m : entry.at("measurements")) {
      const double time = m.at("time");
      if (entry.value("aggregate_name", "") == "cv") {
        EXPECT_NEAR(time, 0.0, 1e-6) << name;  // same relative spread in A and B
      } else {
        EXPECT_NEAR(time, 1.0, 1e-9) << name;  // +100%
      }
    }
  }
  EXPECT_EQ(compared, 2 * 4 + 2);  // per case: the iterations row + 4 aggregates
  std::remove(a.c_str());
  std::remove(b.c_str());
  std::remove(dump.c_str());
  rmdir(dir.c_str());
}

// Emulated results (qemu-user) are marked in the context and on every entry, so an
// emulated export compared with a native one is visibly not hardware vs hardware; the
// marks keep compare.py working. Before, `grep -i emul` found nothing in the export.
TEST(GbenchCompareTest, EmulatedResultsAreMarkedAndComparePyStillReadsThem) {
  ASSERT_EQ(access(kComparePy, R_OK), 0) << kComparePy << " is missing";
  const std::string dir = TempDir();
  ASSERT_FALSE(dir.empty());
  const std::string a = dir + "/A.json", b = dir + "/B.json";
  fleetmark::v1::RunReport emulated = Scaled(2);
  emulated.mutable_host()->set_emulated(true);
  emulated.mutable_host()->set_emulation_evidence("binary aarch64, /proc/cpuinfo x86");
  for (auto& r : *emulated.mutable_results()) r.set_emulated(true);
  const std::string text = FormatGbenchJson(emulated);
  const nlohmann::json doc = nlohmann::json::parse(text);
  EXPECT_EQ(doc.at("context").at("fleetmark_emulated"), true);
  EXPECT_EQ(doc.at("context").at("fleetmark_emulation_evidence"), "binary aarch64, /proc/cpuinfo x86");
  ASSERT_FALSE(doc.at("benchmarks").empty());
  for (const auto& e : doc.at("benchmarks")) {
    EXPECT_EQ(e.at("label"), "emulated") << e.dump();
    EXPECT_EQ(e.at("fleetmark_emulated"), true) << e.dump();
  }
  const nlohmann::json native = nlohmann::json::parse(FormatGbenchJson(Scaled(1)));
  EXPECT_EQ(native.at("context").at("fleetmark_emulated"), false);
  for (const auto& e : native.at("benchmarks")) EXPECT_FALSE(e.contains("label")) << e.dump();

  WriteFile(a, FormatGbenchJson(Scaled(1)));
  WriteFile(b, text);
  const CommandResult r = RunCommand(absl::StrCat(kPython, " ", kComparePy, " --no-color benchmarks ", a, " ", b));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("batch/arithmetic/blocking/fixed_pool/any"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("+1.0000"), std::string::npos) << r.output;
  std::remove(a.c_str());
  std::remove(b.c_str());
  rmdir(dir.c_str());
}

// Failed and non-batch cases are error entries; compare.py still compares the rest.
TEST(GbenchCompareTest, ErrorEntriesDoNotBreakComparePy) {
  ASSERT_EQ(access(kComparePy, R_OK), 0) << kComparePy << " is missing";
  const std::string dir = TempDir();
  ASSERT_FALSE(dir.empty());
  const std::string a = dir + "/A.json";
  fleetmark::v1::RunReport report = Scaled(1);
  fleetmark::v1::CaseResult failed = testing::BatchCase("fiber", 2, "network", 1000, 0);
  failed.set_status(fleetmark::v1::CASE_STATUS_RESOURCE_EXHAUSTED);
  failed.set_message("killed");
  *report.add_results() = failed;
  WriteFile(a, FormatGbenchJson(report));
  const CommandResult r = RunCommand(absl::StrCat(kPython, " ", kComparePy, " --no-color benchmarks ", a, " ", a));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("batch/arithmetic/blocking/fixed_pool/any"), std::string::npos) << r.output;
  std::remove(a.c_str());
  rmdir(dir.c_str());
}

// Issue 13: every repetition carried the case's mean CPU time, so compare.py's CPU
// U test compared 12 copies of one number with 12 copies of another: p = 0.0000 for
// every case. Without per-repetition CPU times the export gives none, and compare.py
// claims no significance for CPU (nor tests anything on copies).
TEST(GbenchCompareTest, NoPerRepetitionCpuMeansNoCpuUTest) {
  ASSERT_EQ(access(kComparePy, R_OK), 0) << kComparePy << " is missing";
  const std::string dir = TempDir();
  ASSERT_FALSE(dir.empty());
  const std::string a = dir + "/A.json", b = dir + "/B.json", dump = dir + "/diff.json";
  fleetmark::v1::RunReport ra = Scaled(1), rb = Scaled(1);
  for (auto* report : {&ra, &rb}) {
    for (auto& r : *report->mutable_results()) r.clear_cpu_samples_ns();
  }
  // Same wall times; B's mean CPU 10% higher.
  for (auto& r : *rb.mutable_results()) {
    r.mutable_counters()->set_cpu_user_seconds(r.counters().cpu_user_seconds() * 1.1);
  }
  WriteFile(a, FormatGbenchJson(ra));
  WriteFile(b, FormatGbenchJson(rb));
  const CommandResult r =
      RunCommand(absl::StrCat(kPython, " ", kComparePy, " --no-color -d ", dump, " benchmarks ", a, " ", b));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(dump);
  const nlohmann::json diff = nlohmann::json::parse(in);
  for (const auto& entry : diff) {
    if (!entry.contains("utest") || entry.at("utest").empty()) continue;
    const auto& utest = entry.at("utest");
    if (utest.contains("cpu_pvalue") && !utest.at("cpu_pvalue").is_null()) {
      EXPECT_GE(utest.at("cpu_pvalue").get<double>(), 0.05) << entry.dump() << "\n" << r.output;
    }
  }
  EXPECT_EQ(r.output.find("0.0000      U Test"), std::string::npos) << r.output;

  // With per-repetition CPU times the U test runs on them: the same data, no change.
  WriteFile(a, FormatGbenchJson(Scaled(1)));
  WriteFile(b, FormatGbenchJson(Scaled(1)));
  const CommandResult same =
      RunCommand(absl::StrCat(kPython, " ", kComparePy, " --no-color -d ", dump, " benchmarks ", a, " ", b));
  ASSERT_EQ(same.exit_code, 0) << same.output;
  EXPECT_NE(same.output.find("U Test"), std::string::npos) << same.output;
  std::ifstream in2(dump);
  bool tested = false;
  for (const auto& entry : nlohmann::json::parse(in2)) {
    if (!entry.contains("utest") || entry.at("utest").empty()) continue;
    tested = true;
    EXPECT_GE(entry.at("utest").at("cpu_pvalue").get<double>(), 0.05) << entry.dump();
  }
  EXPECT_TRUE(tested) << same.output;
  for (const std::string& f : {a, b, dump}) std::remove(f.c_str());
  rmdir(dir.c_str());
}

TEST(GbenchCompareTest, IdenticalExportsShowNoChange) {
  ASSERT_EQ(access(kComparePy, R_OK), 0) << kComparePy << " is missing";
  const std::string dir = TempDir();
  ASSERT_FALSE(dir.empty());
  const std::string a = dir + "/A.json";
  WriteFile(a, FormatGbenchJson(Scaled(1)));
  const CommandResult r = RunCommand(absl::StrCat(kPython, " ", kComparePy, " --no-color benchmarks ", a, " ", a));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("+0.0000"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("+1.0000"), std::string::npos) << r.output;
  std::remove(a.c_str());
  rmdir(dir.c_str());
}

}  // namespace
}  // namespace fleetmark::report
