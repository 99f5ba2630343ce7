// `fleetmark show FILE [--wide]`: a saved results file (`fleetmark run --format json
// --out F`, `fleetmark export --format json`) printed as `runs show` prints a run: a
// summary line, the outcome line, then per device the results tables and the
// conditions, by the same renderers (remote_render.h). No coordinator is asked.
#include <iostream>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "coordinator/cli/command.h"
#include "coordinator/cli/remote_commands.h"
#include "coordinator/cli/remote_render.h"
#include "coordinator/cli/results_files.h"
#include "coordinator/cli/run_flags.h"
#include "coordinator/cli/table_fit.h"
#include "engine/common/text.h"

namespace fleetmark::cli {
namespace {

constexpr char kShowUsage[] = "fleetmark show FILE [--wide]";

// "results file F  plan P  local  quick  created ...": what the file says of its run
// (a fleet export: the run's id, status, selector and submitter too), and a line saying
// so when the run was incomplete (ResultsRun.incomplete).
std::string FileSummary(const std::string& path, const v1::ResultsDocument& document) {
  const v1::ResultsRun& run = document.run();
  std::string line = absl::StrCat("results file ", path, "  plan ", run.plan_name(), "  ",
                                  document.source().empty() ? "local" : document.source());
  if (!run.run_id().empty()) absl::StrAppend(&line, "  run ", run.run_id());
  if (!run.status().empty()) absl::StrAppend(&line, "  ", run.status());
  if (run.quick()) absl::StrAppend(&line, "  quick");
  if (!run.selector().empty()) absl::StrAppend(&line, "  selector '", run.selector(), "'");
  if (!run.submitted_by().empty()) absl::StrAppend(&line, "  by ", run.submitted_by());
  if (run.created_unix_ns() > 0) absl::StrAppend(&line, "  created ", FormatUnixNs(run.created_unix_ns()));
  if (run.finished_unix_ns() > 0) absl::StrAppend(&line, "  finished ", FormatUnixNs(run.finished_unix_ns()));
  // A second line: the file does not hold every case's full measurement.
  return absl::StrCat(EscapeForTerminal(line),
                      run.incomplete() ? "\n  incomplete: from an interrupted or cancelled run; partial results cover "
                                         "their finished rounds only"
                                       : "");
}

absl::StatusOr<int> Show(const std::vector<std::string>& args) {
  if (args.size() != 1) return UsageError(kShowUsage, "show takes one results file");
  absl::StatusOr<v1::ResultsDocument> document = ReadResultsFile("show", "FILE", args[0]);
  if (!document.ok()) return document.status();
  const bool wide = absl::GetFlag(FLAGS_wide);
  absl::StatusOr<std::string> tables = ResultTables(*document, FittedTableOptions(wide));
  if (!tables.ok()) return FleetmarkError(absl::InternalError(absl::StrCat("show: ", tables.status().message())));
  std::cout << FileSummary(args[0], *document) << "\n"
            << DocumentCasesLine(*document) << "\n\n"
            << *tables << ConditionsTables(*document, wide);
  return kExitOk;
}

}  // namespace

void RegisterShowCommand(CommandRegistry& registry) {
  registry.Add({.name = "show",
                .summary = "show a saved results file (fleetmark run --out, export --format json) as runs show "
                           "shows a run: its results tables and conditions per device",
                .usage = kShowUsage,
                .run = Show});
}

}  // namespace fleetmark::cli
