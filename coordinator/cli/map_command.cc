// `fleetmark map`: the strategy map (engine/report/strategy_map.h) of each agent of a
// run, or of a results file written by `fleetmark run --format json`.
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "coordinator/cli/remote_client.h"
#include "coordinator/cli/remote_commands.h"
#include "coordinator/cli/remote_flags.h"
#include "coordinator/cli/remote_render.h"
#include "engine/common/text.h"
#include "engine/report/json.h"
#include "engine/report/strategy_map.h"

namespace fleetmark::cli {
namespace {

constexpr char kUsage[] = "fleetmark map RUN [--agent NAME] [--include_emulated] | fleetmark map --results FILE";
constexpr std::streamsize kMaxResultsFileBytes = std::streamsize{1} << 30;

// The results of `path` (RunReport JSON); exit code 2 with the reason on failure.
std::optional<v1::RunReport> ReadResultsFile(const std::string& path, int* exit_code) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::cerr << "fleetmark: map: --results: cannot read \"" << EscapeForTerminal(path) << "\"\n";
    *exit_code = kExitUsage;
    return std::nullopt;
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (text.tellp() > kMaxResultsFileBytes) {
    std::cerr << "fleetmark: map: --results: at most " << kMaxResultsFileBytes << " bytes\n";
    *exit_code = kExitUsage;
    return std::nullopt;
  }
  absl::StatusOr<v1::RunReport> report = report::ParseJson(text.str());
  if (!report.ok()) {
    std::cerr << "fleetmark: map: --results: " << EscapeForTerminal(path)
              << ": not a results file of `fleetmark run --format json`: "
              << EscapeForTerminal(std::string(report.status().message())) << "\n";
    *exit_code = kExitUsage;
    return std::nullopt;
  }
  return *report;
}

// The map of one device's results, under its name.
std::string DeviceMap(const std::string& device, const std::vector<v1::CaseResult>& results) {
  const report::StrategyMap map = report::BuildStrategyMap(results);
  std::string text = report::FormatStrategyMap(map);
  if (text.empty()) text = "no batch case measured ok: nothing to map\n\n";
  return absl::StrCat("device ", EscapeForTerminal(device), "\n", text);
}

int Map(const std::vector<std::string>& args) {
  const std::string file = absl::GetFlag(FLAGS_results);
  const std::string only = absl::GetFlag(FLAGS_agent);
  const bool include_emulated = absl::GetFlag(FLAGS_include_emulated);
  int code = kExitOk;
  // device name -> its results
  std::map<std::string, std::vector<v1::CaseResult>> devices;
  if (!file.empty()) {
    if (!args.empty()) return RemoteUsageError(kUsage, "map takes a run id or --results FILE, not both");
    if (!only.empty()) return RemoteUsageError(kUsage, "map: --agent selects an agent of a run, not of --results");
    std::optional<v1::RunReport> report = ReadResultsFile(file, &code);
    if (!report) return code;
    const std::string name = report->host().hostname().empty() ? "this host" : report->host().hostname();
    devices[name].assign(report->results().begin(), report->results().end());
  } else {
    if (args.size() != 1) return RemoteUsageError(kUsage, "map takes one run id (or --results FILE)");
    std::optional<ControlClient> client = ClientFromFlags(&code);
    if (!client) return code;
    v1::ExportResultsResponse exported;
    grpc::Status status = client->FetchResults(args[0], only, std::chrono::seconds(300), &exported);
    if (!status.ok()) return client->Fail(absl::StrCat("results of run ", args[0]), status);
    const std::map<std::string, v1::RunReport> reports = ReportsByAgent(exported);
    if (!only.empty() && reports.count(only) == 0) {
      std::cerr << "fleetmark: map: --agent: agent \"" << EscapeForTerminal(only) << "\" has no results in run "
                << exported.run().run_id() << "\n";
      return kExitUsage;
    }
    for (const auto& [name, report] : reports) {
      std::vector<v1::CaseResult>& kept = devices[name];
      int left_out = 0;
      for (const v1::CaseResult& r : report.results()) {
        // Emulated numbers are never mapped as hardware numbers unless asked.
        if (r.emulated() && !include_emulated) {
          ++left_out;
          continue;
        }
        kept.push_back(r);
      }
      if (left_out > 0) {
        std::cerr << "fleetmark: map: left out " << left_out << " results of \"" << EscapeForTerminal(name)
                  << "\" measured under emulation (--include_emulated keeps them)\n";
      }
    }
    std::cout << RunSummary(exported.run()) << "\n\n";
  }
  for (const auto& [name, results] : devices) std::cout << DeviceMap(name, results);
  return kExitOk;
}

}  // namespace

void RegisterMapCommand(CommandRegistry& registry) {
  registry.Add({.name = "map",
                .summary = "the strategy map per device: winner, runner-up, ratio with CI or tie, and crossovers",
                .usage = kUsage,
                .run = Map});
}

}  // namespace fleetmark::cli
