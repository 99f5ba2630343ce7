// Flags of `fleetmark run` (and of other commands that write results: --format, --out),
// parsed into RunCommandOptions. Only this folder's *_flags.cc files define flags.
#pragma once

#include <string>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/status/statusor.h"
#include "engine/report/report.h"

ABSL_DECLARE_FLAG(std::string, format);
ABSL_DECLARE_FLAG(std::string, out);
ABSL_DECLARE_FLAG(std::string, filter);
ABSL_DECLARE_FLAG(bool, quick);
ABSL_DECLARE_FLAG(bool, wide);
ABSL_DECLARE_FLAG(bool, quiet);

namespace fleetmark::cli {

struct RunCommandOptions {
  report::ReportFormat format = report::ReportFormat::kTable;
  std::string out;     // "" = stdout
  std::string filter;  // RE2 regex on case ids (engine/plan/case_filter.h); "" = all
  bool quick = false;
  bool wide = false;   // table: the full tables (table_fit.h)
  bool quiet = false;  // with `out`: no table on stdout (without it the table is printed too)
};

// Reads the flags. InvalidArgument naming the flag for a bad --format, or --quiet
// without --out.
absl::StatusOr<RunCommandOptions> RunCommandOptionsFromFlags();

// The one rule for a --filter given on the command line (`flags_set`: the flag names
// given, engine/common/flag_parser.h) with an empty or blank value, on every command
// that takes it (run, submit, schedules create): InvalidArgument naming --filter — an
// unset shell variable (`--filter "$RE"`) must not run the whole plan, as with --select;
// leaving the flag out still runs every case. OK otherwise.
absl::Status CheckGivenFilter(const std::vector<std::string>& flags_set);

}  // namespace fleetmark::cli
