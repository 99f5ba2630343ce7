// `fleetmark export`, `fleetmark results prune` and `fleetmark results import`
// (`fleetmark compare` is compare_command.cc).
#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "coordinator/cli/remote_client.h"
#include "coordinator/cli/remote_commands.h"
#include "coordinator/cli/remote_flags.h"
#include "coordinator/cli/remote_render.h"
#include "coordinator/cli/result_output.h"
#include "coordinator/cli/results_files.h"
#include "coordinator/cli/run_flags.h"
#include "coordinator/service/retention.h"
#include "engine/common/message_limits.h"
#include "engine/common/text.h"
#include "engine/report/csv.h"
#include "engine/report/json.h"
#include "engine/report/report.h"
#include "engine/report/results_document.h"

namespace fleetmark::cli {
namespace {

// Fetches the run's results (optionally of one agent), or the call's error.
absl::StatusOr<v1::ExportResultsResponse> Fetch(ControlClient& client, const std::string& run_id,
                                                const std::string& agent) {
  v1::ExportResultsResponse response;
  grpc::Status status =
      client.FetchResults(run_id, agent, std::chrono::seconds(300), &response, /*record_export=*/agent.empty());
  if (!status.ok()) return client.CallError(absl::StrCat("results of run ", run_id), status);
  return response;
}

absl::StatusOr<int> Export(const std::vector<std::string>& args) {
  static const char kUsage[] = "fleetmark export RUN --format csv|json|gbench-json|table [--out FILE] [--agents NAME]";
  if (args.size() != 1) return UsageError(kUsage, "export takes one run id");
  absl::StatusOr<RunCommandOptions> options = RunCommandOptionsFromFlags();
  if (!options.ok()) return FleetmarkError(absl::InvalidArgumentError(options.status().message()));
  const std::string agent = absl::GetFlag(FLAGS_agents);
  if (agent.find(',') != std::string::npos) return UsageError(kUsage, "export: --agents takes one agent name");
  // --out is checked (created as a temporary file beside it) before connecting: an
  // unwritable path is bad input (exit 2) with the system's reason.
  absl::StatusOr<ResultOutput> output = ResultOutput::Open(options->out, "");
  if (!output.ok()) return FleetmarkError(absl::InvalidArgumentError(output.status().message()));
  absl::StatusOr<ControlClient> client = ClientFromFlags();
  if (!client.ok()) return client.status();
  absl::StatusOr<v1::ExportResultsResponse> exported = Fetch(*client, args[0], agent);
  if (!exported.ok()) return exported.status();
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
        return UsageError(kUsage, absl::StrCat("gbench-json holds one host: pass --agents NAME (run ",
                                               exported->run().run_id(), " has ", absl::StrJoin(names, ", "), ")"));
      }
      text = reports.empty() ? report::FormatReport(v1::RunReport(), options->format)
                             : report::FormatReport(reports.begin()->second, options->format);
      break;
    }
  }
  if (!text.ok()) return FleetmarkError(absl::InternalError(absl::StrCat("export: ", text.status().message())));
  if (absl::Status written = output->WriteAll(*text); !written.ok()) {
    return FleetmarkError(absl::InternalError(absl::StrCat("export: ", written.message())));
  }
  if (!options->out.empty()) {
    std::cerr << WroteResultsLine(exported->results_size(), options->out) << "\n";
  }
  return kExitOk;
}

constexpr char kPruneUsage[] = "fleetmark results prune --older_than DURATION [--force] [--dry_run]";

// "2026-03" for the month starting at `unix_ns` (UTC).
std::string MonthOf(int64_t unix_ns) {
  return absl::FormatTime("%Y-%m", absl::FromUnixNanos(unix_ns), absl::UTCTimeZone());
}

absl::StatusOr<int> ResultsPrune(const std::vector<std::string>& args) {
  if (!args.empty()) return UsageError(kPruneUsage, "results prune takes no arguments");
  if (absl::GetFlag(FLAGS_older_than).empty()) {
    return UsageError(kPruneUsage, "results prune: --older_than DURATION is required (e.g. --older_than 400d)");
  }
  absl::StatusOr<absl::Duration> older_than = service::ParseRetention("--older_than", absl::GetFlag(FLAGS_older_than));
  if (!older_than.ok()) return UsageError(kPruneUsage, std::string(older_than.status().message()));
  v1::PruneResultsRequest request;
  request.set_older_than_seconds(absl::ToInt64Seconds(*older_than));
  request.set_force(absl::GetFlag(FLAGS_force));
  request.set_dry_run(absl::GetFlag(FLAGS_dry_run));
  v1::PruneResultsResponse response;
  if (absl::Status called = CallControl(&v1::ControlService::Stub::PruneResults, request, &response, "results prune");
      !called.ok()) {
    return called;
  }
  const char* verb = response.dry_run() ? "would drop" : "dropped";
  if (response.partitions_size() == 0) {
    std::cout << "nothing to prune: no month of results ends before " << FormatUnixNs(response.cutoff_unix_ns())
              << "\n";
    return kExitOk;
  }
  for (const v1::ResultPartitionInfo& p : response.partitions()) {
    std::cout << verb << " " << MonthOf(p.from_unix_ns()) << " (" << EscapeForTerminal(p.name()) << ", ";
    if (p.estimated_rows() >= 0) {
      std::cout << "about " << p.estimated_rows() << " results)\n";
    } else {
      std::cout << "results not counted yet)\n";
    }
  }
  std::cout << verb << " " << response.run_ids_size() << " runs created before "
            << FormatUnixNs(response.partitions(response.partitions_size() - 1).to_unix_ns()) << " with their jobs";
  if (response.run_ids_size() > 0) std::cout << ": " << absl::StrJoin(response.run_ids(), ", ");
  std::cout << "\n";
  if (response.dry_run()) std::cout << "dry run: nothing was changed\n";
  return kExitOk;
}

constexpr char kImportUsage[] = "fleetmark results import FILE...";

// The largest import request that both the CLI's channel and the coordinator take.
constexpr size_t kMaxImportRequestBytes = std::min(kCliMaxMessageBytes, kCoordinatorMaxMessageBytes);

// "FILE: 3 new, 1 already stored" and, per device with new results, where they went.
void PrintImported(const std::string& path, const v1::ImportResultsResponse& response) {
  std::cout << EscapeForTerminal(absl::StrCat(
                   path, ": ", response.stored(), " new, ", response.already_stored(), " already stored",
                   response.run_id().empty() ? "" : absl::StrCat(" (run ", response.run_id(), ", imported)")))
            << "\n";
  for (const v1::ImportedDevice& device : response.devices()) {
    if (device.stored() == 0) continue;
    std::cout << EscapeForTerminal(absl::StrCat("  device ", device.name(), ": ", device.stored(), " new under ",
                                                device.matched() ? "agent " : "imported device ", device.agent_name(),
                                                device.matched() ? " (an agent of that machine)" : ""))
              << "\n";
  }
}

absl::StatusOr<int> ResultsImport(const std::vector<std::string>& args) {
  if (args.empty()) return UsageError(kImportUsage, "results import takes one or more results files");
  // Every file is read and checked before anything is sent: a refused file stores
  // nothing, of it or of the others.
  std::vector<std::pair<std::string, v1::ImportResultsRequest>> requests;
  std::set<std::string> seen;
  for (const std::string& path : args) {
    if (!seen.insert(path).second) {
      return FleetmarkError(
          absl::InvalidArgumentError(absl::StrCat("results import: each file once, got ", EchoValue(path), " twice")));
    }
    absl::StatusOr<v1::ResultsDocument> document = ReadResultsFile("results import", "FILE", path);
    if (!document.ok()) return document.status();
    if (document->schema_version() == 0) {
      return FleetmarkError(absl::InvalidArgumentError(absl::StrCat(
          "results import: FILE: ", EchoValue(path),
          ": written before the results schema (no schema_version); the coordinator imports schema_version 1",
          report::kResultsSchemaVersion > 1 ? absl::StrCat(" to ", report::kResultsSchemaVersion) : "",
          ": write it again with fleetmark run --format json")));
    }
    v1::ImportResultsRequest request;
    *request.mutable_document() = *std::move(document);
    request.set_submitted_by(absl::StrCat("import:", Submitter()));
    if (request.ByteSizeLong() > kMaxImportRequestBytes) {
      return FleetmarkError(absl::InvalidArgumentError(
          absl::StrCat("results import: FILE: ", EchoValue(path), ": ", request.ByteSizeLong(),
                       " bytes as one request, over the message limit of ", FormatMessageLimit(kMaxImportRequestBytes),
                       " (engine/common/message_limits.h): split its devices or results into several files (importing "
                       "is idempotent by result id)")));
    }
    requests.emplace_back(path, std::move(request));
  }
  absl::StatusOr<ControlClient> client = ClientFromFlags();
  if (!client.ok()) return client.status();
  for (const auto& [path, request] : requests) {
    v1::ImportResultsResponse response;
    std::unique_ptr<grpc::ClientContext> context = client->Context(std::chrono::seconds(300));
    grpc::Status status = client->stub().ImportResults(context.get(), request, &response);
    if (!status.ok()) return client->CallError(absl::StrCat("results import: ", path), status);
    PrintImported(path, response);
  }
  return kExitOk;
}

}  // namespace

void RegisterResultsRemoteCommands(CommandRegistry& registry) {
  registry.Add({.name = "export",
                .summary = "export a run's results (csv with an agent column, json, gbench-json for one agent)",
                .usage = "fleetmark export RUN --format csv|json|gbench-json|table [--out FILE] [--agents NAME]",
                .run = Export,
                .text_arguments = {"RUN"}});
  registry.Add({.name = "results prune",
                .summary = "drop whole months of results older than a duration, with their runs (refuses runs never "
                           "exported unless --force; --dry_run lists them)",
                .usage = kPruneUsage,
                .run = ResultsPrune});
  registry.Add({.name = "results import",
                .summary = "store results files (run --format json --out, export --format json) in the coordinator, "
                           "under the devices they came from, marked imported; results already stored are skipped",
                .usage = kImportUsage,
                .run = ResultsImport});
}

}  // namespace fleetmark::cli
