#include "coordinator/cli/run_flags.h"

#include <algorithm>

#include "absl/flags/flag.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

ABSL_FLAG(std::string, format, "table",
          "output format of results: table | json | csv | gbench-json (Google Benchmark's "
          "JSON, readable by its compare.py)");
ABSL_FLAG(std::string, out, "", "write results to this file instead of stdout");
ABSL_FLAG(std::string, filter, "",
          "run only cases whose case id (e.g. batch/arithmetic/blocking/fixed_pool/any) "
          "matches this regular expression (RE2 syntax: no backreferences or lookaround; at "
          "most 1024 bytes)");
ABSL_FLAG(bool, quick, false,
          "use the plan's quick settings (its `quick` measurement overrides and "
          "`quick_matrix`)");

ABSL_FLAG(bool, wide, false,
          "run, runs show, show, submit --wait: the full tables (one row per case, unwrapped) instead of "
          "fitting the terminal ($COLUMNS, else the terminal's width; output that is not a terminal, "
          "or a file written by --out, is never narrowed) and collapsing unsupported cases into one line");

ABSL_FLAG(bool, quiet, false,
          "run: with --out, write the results to the file only (without --quiet the results table is also "
          "printed on stdout)");

namespace fleetmark::cli {

absl::StatusOr<RunCommandOptions> RunCommandOptionsFromFlags() {
  RunCommandOptions options;
  absl::StatusOr<report::ReportFormat> format = report::ParseReportFormat(absl::GetFlag(FLAGS_format));
  if (!format.ok()) return format.status();
  options.format = *format;
  options.out = absl::GetFlag(FLAGS_out);
  options.filter = absl::GetFlag(FLAGS_filter);
  options.quick = absl::GetFlag(FLAGS_quick);
  options.wide = absl::GetFlag(FLAGS_wide);
  options.quiet = absl::GetFlag(FLAGS_quiet);
  if (options.quiet && options.out.empty()) {
    return absl::InvalidArgumentError(
        "--quiet: only with --out FILE (it keeps the table off stdout; without --out the results are stdout)");
  }
  return options;
}

absl::Status CheckGivenFilter(const std::vector<std::string>& flags_set) {
  if (std::find(flags_set.begin(), flags_set.end(), "filter") == flags_set.end()) return absl::OkStatus();
  const std::string filter = absl::GetFlag(FLAGS_filter);
  if (!absl::StripAsciiWhitespace(filter).empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("--filter: a regular expression on case ids, got \"", filter,
                   "\" (an unset shell variable must not run the whole plan; leave --filter out for every case)"));
}

}  // namespace fleetmark::cli
