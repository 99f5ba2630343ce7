// `fleetmark export` (`fleetmark compare` is compare_command.cc).
#include <cmath>
#include <iostream>
#include <map>
#include <optional>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "coordinator/cli/remote_client.h"
#include "coordinator/cli/remote_commands.h"
#include "coordinator/cli/remote_render.h"
#include "coordinator/cli/result_output.h"
#include "coordinator/cli/run_flags.h"
#include "engine/report/csv.h"
#include "engine/report/json.h"
#include "engine/report/report.h"

namespace fleetmark::cli {
namespace {

// Fetches the run's results (optionally of one agent); prints errors.
std::optional<v1::ExportResultsResponse> Fetch(ControlClient& client, const std::string& run_id,
                                               const std::string& agent, int* exit_code) {
  v1::ExportResultsResponse response;
  grpc::Status status = client.FetchResults(run_id, agent, std::chrono::seconds(300), &response);
  if (!status.ok()) {
    *exit_code = client.Fail(absl::StrCat("results of run ", run_id), status);
    return std::nullopt;
  }
  return response;
}

int Export(const std::vector<std::string>& args) {
  static const char kUsage[] = "fleetmark export RUN --format csv|json|gbench-json|table [--out FILE] [--agents NAME]";
  if (args.size() != 1) return RemoteUsageError(kUsage, "export takes one run id");
  absl::StatusOr<RunCommandOptions> options = RunCommandOptionsFromFlags();
  if (!options.ok()) {
    std::cerr << "fleetmark: " << options.status().message() << "\n";
    return kExitUsage;
  }
  const std::string agent = absl::GetFlag(FLAGS_agents);
  if (agent.find(',') != std::string::npos) return RemoteUsageError(kUsage, "export: --agents takes one agent name");
  // --out is checked (created as a temporary file beside it) before connecting: an
  // unwritable path is bad input (exit 2) with the system's reason.
  absl::StatusOr<ResultOutput> output = ResultOutput::Open(options->out, "");
  if (!output.ok()) {
    std::cerr << "fleetmark: " << output.status().message() << "\n";
    return kExitUsage;
  }
  int code = 0;
  std::optional<ControlClient> client = ClientFromFlags(&code);
  if (!client) return code;
  std::optional<v1::ExportResultsResponse> exported = Fetch(*client, args[0], agent, &code);
  if (!exported) return code;
  absl::StatusOr<std::string> text;
  switch (options->format) {
    case report::ReportFormat::kTable:
      text = ResultTables(*exported);
      break;
    case report::ReportFormat::kCsv:
      text = report::FormatResultsCsv(FleetResultsDocument(*exported));
      break;
    case report::ReportFormat::kJson:
      text = report::FormatResultsJson(FleetResultsDocument(*exported));
      break;
    case report::ReportFormat::kGbenchJson: {
      std::map<std::string, v1::RunReport> reports = ReportsByAgent(*exported);
      if (reports.size() > 1) {
        std::vector<std::string> names;
        for (const auto& [name, report] : reports) names.push_back(name);
        return RemoteUsageError(
            kUsage, absl::StrCat("gbench-json holds one host: pass --agents NAME (run ", exported->run().run_id(),
                                 " has ", absl::StrJoin(names, ", "), ")"));
      }
      text = reports.empty() ? report::FormatReport(v1::RunReport(), options->format)
                             : report::FormatReport(reports.begin()->second, options->format);
      break;
    }
  }
  if (!text.ok()) {
    std::cerr << "fleetmark: export: " << text.status().message() << "\n";
    return kExitFailure;
  }
  if (absl::Status written = output->WriteAll(*text); !written.ok()) {
    std::cerr << "fleetmark: export: " << written.message() << "\n";
    return kExitFailure;
  }
  if (!options->out.empty()) {
    std::cerr << WroteResultsLine(exported->results_size(), options->out) << "\n";
  }
  return kExitOk;
}

}  // namespace

void RegisterResultsRemoteCommands(CommandRegistry& registry) {
  registry.Add({.name = "export",
                .summary = "export a run's results (csv with an agent column, json, gbench-json for one agent)",
                .usage = "fleetmark export RUN --format csv|json|gbench-json|table [--out FILE] [--agents NAME]",
                .run = Export});
}

}  // namespace fleetmark::cli
