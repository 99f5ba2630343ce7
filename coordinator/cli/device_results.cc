// LoadDeviceResults (device_results.h).
#include "coordinator/cli/device_results.h"

#include <algorithm>
#include <iostream>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "coordinator/cli/command.h"
#include "coordinator/cli/remote_client.h"
#include "coordinator/cli/remote_render.h"
#include "coordinator/cli/results_files.h"
#include "coordinator/service/selector.h"
#include "engine/common/text.h"

namespace fleetmark::cli {
namespace {

// The id of the latest run of plan `name` that is done; "" after printing why not.
std::string LatestRunOf(const ControlClient& client, const std::string& command, const std::string& name,
                        int* exit_code) {
  v1::ListRunsRequest request;
  request.set_limit(1000);  // the coordinator's maximum
  v1::ListRunsResponse response;
  auto context = client.Context();
  grpc::Status status = const_cast<ControlClient&>(client).stub().ListRuns(context.get(), request, &response);
  if (!status.ok()) {
    *exit_code = client.Fail("runs list", status);
    return "";
  }
  const v1::RunInfo* latest = nullptr;
  int of_plan = 0;
  for (const v1::RunInfo& run : response.runs()) {
    if (run.plan_name() != name) continue;
    ++of_plan;
    if (run.status() == "done" && (latest == nullptr || run.created_unix_ns() > latest->created_unix_ns())) {
      latest = &run;
    }
  }
  if (latest == nullptr) {
    std::cerr << "fleetmark: " << command << ": --plan_latest: no finished (done) run of plan \"" << EchoValue(name)
              << "\" (" << of_plan << " runs of it in any state)\n";
    *exit_code = kExitUsage;
    return "";
  }
  return latest->run_id();
}

}  // namespace

std::optional<DeviceResults> LoadDeviceResults(const DeviceResultsRequest& r, int* exit_code) {
  *exit_code = kExitUsage;
  const int sources = (r.args.empty() ? 0 : 1) + (r.results_file.empty() ? 0 : 1) + (r.plan_latest.empty() ? 0 : 1);
  if (sources != 1 || r.args.size() > 1) {
    RemoteUsageError(r.usage, absl::StrCat(r.command, " takes one of a run id, --results FILE or --plan_latest NAME"));
    return std::nullopt;
  }
  absl::StatusOr<service::Selector> selector = service::Selector::Parse(r.select);
  if (!selector.ok()) {
    std::cerr << "fleetmark: " << r.command << ": --select: " << selector.status().message() << "\n";
    return std::nullopt;
  }
  DeviceResults out;
  if (!r.results_file.empty()) {
    if (!r.agent.empty()) {
      RemoteUsageError(r.usage, absl::StrCat(r.command, ": --agent selects an agent of a run, not of --results"));
      return std::nullopt;
    }
    std::optional<std::vector<FileDevice>> files = ReadResultsFiles(r.command, r.results_file, exit_code);
    if (!files) return std::nullopt;
    int with_results = 0;
    std::vector<const FileDevice*> kept;
    for (const FileDevice& device : *files) {
      with_results += device.report.results_size() > 0;
      if (selector->Matches(device.label, device.report.host(), {}) && device.report.results_size() > 0) {
        out.devices[device.label].assign(device.report.results().begin(), device.report.results().end());
        kept.push_back(&device);
      }
    }
    out.one_host = OneHostNotes(kept);
    out.header = FilesSummary(kept);
    if (out.devices.empty()) {
      // Never an empty answer with exit 0. Every file holds results (LoadResultsFile's
      // rule, results_files.h), so the selector left nothing.
      std::cerr << "fleetmark: " << r.command << ": --results: " << EscapeForTerminal(r.results_file)
                << ": --select matched none of its " << with_results << (with_results == 1 ? " device" : " devices")
                << "\n";
      *exit_code = kExitUsage;
      return std::nullopt;
    }
    *exit_code = kExitOk;
    return out;
  }
  std::optional<ControlClient> client = ClientFromFlags(exit_code);
  if (!client) return std::nullopt;
  std::string run_id = r.args.empty() ? "" : r.args[0];
  if (!r.plan_latest.empty()) {
    run_id = LatestRunOf(*client, r.command, r.plan_latest, exit_code);
    if (run_id.empty()) return std::nullopt;
  }
  v1::ExportResultsResponse exported;
  grpc::Status status = client->FetchResults(run_id, r.agent, std::chrono::seconds(300), &exported);
  if (!status.ok()) {
    *exit_code = client->Fail(absl::StrCat("results of run ", run_id), status);
    return std::nullopt;
  }
  const std::map<std::string, v1::RunReport> reports = ReportsByAgent(exported);
  if (!r.agent.empty() && reports.count(r.agent) == 0) {
    std::cerr << "fleetmark: " << r.command << ": --agent: agent \"" << EscapeForTerminal(r.agent)
              << "\" has no results in run " << exported.run().run_id() << "\n";
    return std::nullopt;
  }
  // Labels for --select: the agents' own (ListAgents, removed ones too).
  std::map<std::string, std::map<std::string, std::string>> labels;
  if (!selector->empty()) {
    v1::ListAgentsRequest list;
    list.set_include_removed(true);
    v1::ListAgentsResponse agents;
    auto context = client->Context();
    grpc::Status listed = client->stub().ListAgents(context.get(), list, &agents);
    if (!listed.ok()) {
      *exit_code = client->Fail("agents list", listed);
      return std::nullopt;
    }
    for (const v1::AgentInfo& a : agents.agents()) labels[a.name()].insert(a.labels().begin(), a.labels().end());
  }
  for (const auto& [name, report] : reports) {
    if (!selector->Matches(name, report.host(), labels[name])) continue;
    std::vector<v1::CaseResult>& kept = out.devices[name];
    int left_out = 0;
    for (const v1::CaseResult& result : report.results()) {
      // Emulated numbers are never read as hardware numbers unless asked.
      if (result.emulated() && !r.include_emulated) {
        ++left_out;
        continue;
      }
      kept.push_back(result);
    }
    if (left_out > 0) {
      std::cerr << "fleetmark: " << r.command << ": left out " << left_out << " results of \""
                << EscapeForTerminal(name) << "\" measured under emulation (--include_emulated keeps them)\n";
    }
  }
  // Never an empty answer with exit 0: say what left nothing (the run, the selector or
  // emulation).
  for (auto it = out.devices.begin(); it != out.devices.end();) {
    it = it->second.empty() ? out.devices.erase(it) : std::next(it);
  }
  if (out.devices.empty()) {
    std::cerr << "fleetmark: " << r.command << ": run " << EscapeForTerminal(exported.run().run_id())
              << (reports.empty() ? " has no results yet"
                  : !selector->empty() && std::none_of(reports.begin(), reports.end(),
                                                       [&](const auto& e) {
                                                         return selector->Matches(e.first, e.second.host(),
                                                                                  labels[e.first]);
                                                       })
                      ? absl::StrCat(": --select matched none of its ", reports.size(),
                                     reports.size() == 1 ? " agent" : " agents")
                      : ": every result left was measured under emulation (--include_emulated keeps them)")
              << "\n";
    *exit_code = kExitUsage;
    return std::nullopt;
  }
  out.header = RunSummary(exported.run());
  *exit_code = kExitOk;
  return out;
}

}  // namespace fleetmark::cli
