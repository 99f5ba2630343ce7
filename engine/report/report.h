// Result formats of fleetmark: one entry point that renders a RunReport (a plan's
// case results plus the host) as a human table, protobuf JSON, CSV, or Google
// Benchmark's JSON. Used by `fleetmark run --format` and `fleetmark export`.
//
//   FLEETMARK_ASSIGN_OR_RETURN(ReportFormat f, ParseReportFormat(format_flag));
//   FLEETMARK_ASSIGN_OR_RETURN(std::string text, FormatReport(report, f));
//
// Each format also has its own header (table.h, json.h, csv.h, gbench_json.h).
// All functions are pure (no I/O), thread-safe, and never crash on any RunReport:
// missing statistics, unknown statuses and empty reports render as such.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "engine/report/table.h"
#include "fleetmark/v1/result.pb.h"

namespace fleetmark::report {

enum class ReportFormat { kTable, kJson, kCsv, kGbenchJson };

// Names accepted by ParseReportFormat, in order: "table", "json", "csv", "gbench-json".
inline constexpr std::string_view kReportFormatNames[] = {"table", "json", "csv", "gbench-json"};

// InvalidArgument "--format: got 'x', allowed table|json|csv|gbench-json" otherwise.
absl::StatusOr<ReportFormat> ParseReportFormat(std::string_view name);
std::string_view ReportFormatName(ReportFormat format);

struct ReportOptions {
  // Time written as the gbench-json context's "date" (its only use); tests fix it.
  absl::Time now = absl::Now();
  // gbench-json context "executable"; default "fleetmark".
  std::string executable = "fleetmark";
  // gbench-json time unit of every entry: "ns", "us", "ms" or "s".
  std::string gbench_time_unit = "ns";
  // table: the table options (counters columns, terminal width, collapsed unsupported
  // cases; engine/report/table.h). The default is the full table.
  TableOptions table = {};
};

// Renders `report` in `format`. Errors only from the JSON printer (Internal).
absl::StatusOr<std::string> FormatReport(const fleetmark::v1::RunReport& report, ReportFormat format,
                                         const ReportOptions& options = {});

}  // namespace fleetmark::report
