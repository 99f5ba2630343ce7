// Energy in the result formats (CaseResult.energy, docs/energy.md): the table's J/task
// and W columns only when a case was measured, "unresolved" instead of a number, and
// "energy: unavailable (<why>)" once per run; the CSV columns; the JSON round trip and
// the value check's refusal of a non-finite energy.
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "engine/report/csv.h"
#include "engine/report/json.h"
#include "engine/report/results_check.h"
#include "engine/report/results_document.h"
#include "engine/report/table.h"
#include "engine/report/units.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sample_report.h"

namespace fleetmark::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Two batch cases of one group: direct measured (50 mJ per repetition of 100 tasks net,
// three processes, 40 W), fixed_pool unresolved.
fleetmark::v1::RunReport MeasuredReport() {
  fleetmark::v1::RunReport report;
  report.set_plan_name("energy");
  fleetmark::v1::CaseResult direct = testing::BatchCase("direct", 0, "arithmetic", 2'000'000);
  fleetmark::v1::CaseEnergy* e = direct.mutable_energy();
  e->set_source("rapl:package-0");
  e->set_processes(3);
  e->set_joules_per_repetition(0.08);
  e->set_joules_per_repetition_low(0.07);
  e->set_joules_per_repetition_high(0.09);
  e->set_net_joules_per_repetition(0.05);
  e->set_net_joules_per_repetition_low(0.045);
  e->set_net_joules_per_repetition_high(0.055);
  e->set_joules_per_task(0.0008);
  e->set_net_joules_per_task(0.0005);
  e->set_mean_power_watts(40);
  e->set_baseline_power_watts(15);
  for (double v : {0.07, 0.08, 0.09}) e->add_process_joules_per_repetition(v);
  for (double v : {0.045, 0.05, 0.055}) e->add_process_net_joules_per_repetition(v);
  *report.add_results() = direct;
  fleetmark::v1::CaseResult pool = testing::BatchCase("fixed_pool", 2, "arithmetic", 4'000'000);
  pool.mutable_energy()->set_source("rapl:package-0");
  pool.mutable_energy()->set_unresolved(true);
  pool.mutable_energy()->set_unresolved_reason("process 1: 3e-06 J below the source's resolution 6.1e-05 J");
  *report.add_results() = pool;
  return report;
}

// The same two cases on a host without a readable source.
fleetmark::v1::RunReport UnavailableReport() {
  fleetmark::v1::RunReport report;
  for (const char* strategy : {"direct", "fixed_pool"}) {
    fleetmark::v1::CaseResult r = testing::BatchCase(strategy, 2, "arithmetic", 2'000'000);
    r.mutable_energy()->set_unavailable("no RAPL zone in /sys/class/powercap");
    *report.add_results() = r;
  }
  return report;
}

std::string LineWith(const std::string& text, const std::string& needle) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (line.find(needle) != absl::string_view::npos) return std::string(line);
  }
  return "";
}

TEST(EnergyReportTest, FormatSiScalesJoulesAndWatts) {
  EXPECT_EQ(FormatSi(0.0005, "J"), "500 µJ");
  EXPECT_EQ(FormatSi(0.05, "J"), "50.0 mJ");
  EXPECT_EQ(FormatSi(40, "W"), "40.0 W");
  EXPECT_EQ(FormatSi(2500, "J"), "2.50 kJ");
  EXPECT_EQ(FormatSi(3e-9, "J"), "3.00 nJ");
  EXPECT_EQ(FormatSi(-0.0012, "J"), "-1.20 mJ");  // a net below the idle baseline
  EXPECT_EQ(FormatSi(0, "J"), "0 J");
  EXPECT_EQ(FormatSi(std::numeric_limits<double>::quiet_NaN(), "W"), "-");
}

TEST(EnergyReportTest, TheTableShowsNetJoulesPerTaskPowerAndUnresolved) {
  const std::string text = FormatTable(MeasuredReport());
  const std::string header = LineWith(text, "strategy");
  EXPECT_THAT(header, HasSubstr("J/task"));
  EXPECT_THAT(header, HasSubstr(" W "));
  // 0.5 mJ net per task, ±10 % (0.005 of 0.05 J per repetition), 40 W.
  EXPECT_THAT(LineWith(text, "direct"), HasSubstr("500 µJ ±10%"));
  EXPECT_THAT(LineWith(text, "direct"), HasSubstr("40.0 W"));
  EXPECT_THAT(LineWith(text, "fixed_pool_2"), HasSubstr("unresolved"));
  EXPECT_THAT(text, HasSubstr("J/task: energy per task net of the idle baseline"));
  EXPECT_THAT(text, Not(HasSubstr("energy: unavailable")));
}

TEST(EnergyReportTest, AnUnavailableRunSaysWhyOnceAndHasNoEnergyColumns) {
  const std::string text = FormatTable(UnavailableReport());
  const std::string line = "energy: unavailable (no RAPL zone in /sys/class/powercap)";
  ASSERT_THAT(text, HasSubstr(line));
  EXPECT_EQ(text.find(line), text.rfind(line)) << text;  // once, not per case
  EXPECT_THAT(LineWith(text, "strategy"), Not(HasSubstr("J/task")));
  // A plan without energy: neither the line nor the columns.
  fleetmark::v1::RunReport plain = UnavailableReport();
  for (auto& r : *plain.mutable_results()) r.clear_energy();
  EXPECT_THAT(FormatTable(plain), Not(HasSubstr("energy")));
}

TEST(EnergyReportTest, CsvColumnsCarryTheNumbersTheReasonOrNothing) {
  const auto column = [](const std::string& csv, const std::string& name, int row) {
    const std::vector<std::string> lines = absl::StrSplit(csv, "\r\n");
    const std::vector<std::string> names = absl::StrSplit(lines[0], ',');
    const std::vector<std::string> values = absl::StrSplit(lines[row], ',');
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] == name) return values.at(i);
    }
    ADD_FAILURE() << "no column " << name;
    return std::string();
  };
  const std::string measured = FormatCsv(MeasuredReport());
  EXPECT_EQ(column(measured, "energy_source", 1), "rapl:package-0");
  EXPECT_EQ(column(measured, "energy_net_joules_per_task", 1), "5e-04");  // ShortestDouble
  EXPECT_EQ(column(measured, "energy_joules_per_repetition_low", 1), "0.07");
  EXPECT_EQ(column(measured, "energy_mean_power_watts", 1), "40");
  EXPECT_EQ(column(measured, "energy_unresolved", 1), "false");
  EXPECT_EQ(column(measured, "energy_unavailable", 1), "");
  EXPECT_EQ(column(measured, "energy_unresolved", 2), "true");
  EXPECT_EQ(column(measured, "energy_net_joules_per_task", 2), "");  // never a number when unresolved
  const std::string unavailable = FormatCsv(UnavailableReport());
  EXPECT_EQ(column(unavailable, "energy_unavailable", 1), "no RAPL zone in /sys/class/powercap");
  EXPECT_EQ(column(unavailable, "energy_joules_per_repetition", 1), "");  // never 0
  EXPECT_EQ(column(unavailable, "energy_source", 1), "");
  EXPECT_EQ(CsvColumns().back(), "emulated");
}

TEST(EnergyReportTest, JsonKeepsTheEnergyAndTheCheckRefusesANonFiniteOne) {
  absl::StatusOr<std::string> json = FormatResultsJson(LocalResultsDocument(MeasuredReport()));
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_THAT(*json, HasSubstr("\"net_joules_per_task\": 0.0005"));
  absl::StatusOr<fleetmark::v1::ResultsDocument> back = ParseResultsJson(*json);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->devices(0).results(0).energy().mean_power_watts(), 40);
  EXPECT_TRUE(back->devices(0).results(1).energy().unresolved());

  fleetmark::v1::CaseResult bad = MeasuredReport().results(0);
  bad.mutable_energy()->set_mean_power_watts(std::numeric_limits<double>::infinity());
  const absl::Status refused = CheckResultValues(bad);
  EXPECT_THAT(std::string(refused.message()), HasSubstr("result.energy.mean_power_watts: a finite number, got inf"));
}

}  // namespace
}  // namespace fleetmark::report
