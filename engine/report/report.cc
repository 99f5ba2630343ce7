#include "engine/report/report.h"

#include "absl/strings/str_cat.h"
#include "engine/report/csv.h"
#include "engine/report/gbench_json.h"
#include "engine/report/json.h"
#include "engine/report/table.h"

namespace fleetmark::report {

absl::StatusOr<ReportFormat> ParseReportFormat(std::string_view name) {
  if (name == "table") return ReportFormat::kTable;
  if (name == "json") return ReportFormat::kJson;
  if (name == "csv") return ReportFormat::kCsv;
  if (name == "gbench-json") return ReportFormat::kGbenchJson;
  std::string allowed;
  for (std::string_view n : kReportFormatNames) {
    if (!allowed.empty()) allowed += '|';
    allowed.append(n.data(), n.size());
  }
  return absl::InvalidArgumentError(
      absl::StrCat("--format: got '", absl::string_view(name.data(), name.size()), "', allowed ", allowed));
}

std::string_view ReportFormatName(ReportFormat format) {
  switch (format) {
    case ReportFormat::kTable:
      return "table";
    case ReportFormat::kJson:
      return "json";
    case ReportFormat::kCsv:
      return "csv";
    case ReportFormat::kGbenchJson:
      return "gbench-json";
  }
  return "table";
}

absl::StatusOr<std::string> FormatReport(const fleetmark::v1::RunReport& report, ReportFormat format,
                                         const ReportOptions& options) {
  switch (format) {
    case ReportFormat::kJson:
      return FormatJson(report);
    case ReportFormat::kCsv:
      return FormatCsv(report);
    case ReportFormat::kGbenchJson:
      return FormatGbenchJson(report, GbenchOptions{.now = options.now,
                                                    .executable = options.executable,
                                                    .per_sample_entries = true,
                                                    .time_unit = options.gbench_time_unit});
    case ReportFormat::kTable:
      break;
  }
  return FormatTable(report, options.table);
}

}  // namespace fleetmark::report
