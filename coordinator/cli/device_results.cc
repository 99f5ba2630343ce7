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

// The id of the latest run of plan `name` that is done, or why there is none.
absl::StatusOr<std::string> LatestRunOf(const ControlClient& client, const std::string& command,
                                        const std::string& name) {
  v1::ListRunsRequest request;
  request.set_limit(1000);  // the coordinator's maximum
  v1::ListRunsResponse response;
  auto context = client.Context();
  grpc::Status status = const_cast<ControlClient&>(client).stub().ListRuns(context.get(), request, &response);
  if (!status.ok()) return client.CallError("runs list", status);
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
    return FleetmarkError(
        absl::InvalidArgumentError(absl::StrCat(command, ": --plan_latest: no finished (done) run of plan \"",
                                                EchoValue(name), "\" (", of_plan, " runs of it in any state)")));
  }
  return latest->run_id();
}

}  // namespace

absl::StatusOr<DeviceResults> LoadDeviceResults(const DeviceResultsRequest& r) {
  const int sources = (r.args.empty() ? 0 : 1) + (r.results_file.empty() ? 0 : 1) + (r.plan_latest.empty() ? 0 : 1);
  if (sources != 1 || r.args.size() > 1) {
    return UsageError(r.usage, absl::StrCat(r.command, " takes one of a run id, --results FILE or --plan_latest NAME"));
  }
  absl::StatusOr<service::Selector> selector = service::Selector::Parse(r.select);
  if (!selector.ok()) {
    return FleetmarkError(
        absl::InvalidArgumentError(absl::StrCat(r.command, ": --select: ", selector.status().message())));
  }
  DeviceResults out;
  if (!r.results_file.empty()) {
    if (!r.agent.empty()) {
      return UsageError(r.usage, absl::StrCat(r.command, ": --agent selects an agent of a run, not of --results"));
    }
    absl::StatusOr<std::vector<FileDevice>> files = ReadResultsFiles(r.command, r.results_file);
    if (!files.ok()) return files.status();
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
      return FleetmarkError(absl::InvalidArgumentError(
          absl::StrCat(r.command, ": --results: ", EscapeForTerminal(r.results_file), ": --select matched none of its ",
                       with_results, with_results == 1 ? " device" : " devices")));
    }
    return out;
  }
  absl::StatusOr<ControlClient> client = ClientFromFlags();
  if (!client.ok()) return client.status();
  std::string run_id = r.args.empty() ? "" : r.args[0];
  if (!r.plan_latest.empty()) {
    absl::StatusOr<std::string> latest = LatestRunOf(*client, r.command, r.plan_latest);
    if (!latest.ok()) return latest.status();
    run_id = *latest;
  }
  v1::ExportResultsResponse exported;
  grpc::Status status = client->FetchResults(run_id, r.agent, std::chrono::seconds(300), &exported);
  if (!status.ok()) return client->CallError(absl::StrCat("results of run ", run_id), status);
  const std::map<std::string, v1::RunReport> reports = ReportsByAgent(exported);
  if (!r.agent.empty() && reports.count(r.agent) == 0) {
    return FleetmarkError(
        absl::InvalidArgumentError(absl::StrCat(r.command, ": --agent: agent \"", EscapeForTerminal(r.agent),
                                                "\" has no results in run ", exported.run().run_id())));
  }
  // Labels for --select: the agents' own (ListAgents, removed ones too).
  std::map<std::string, std::map<std::string, std::string>> labels;
  if (!selector->empty()) {
    v1::ListAgentsRequest list;
    list.set_include_removed(true);
    v1::ListAgentsResponse agents;
    auto context = client->Context();
    grpc::Status listed = client->stub().ListAgents(context.get(), list, &agents);
    if (!listed.ok()) return client->CallError("agents list", listed);
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
    const bool none_selected = !selector->empty() && std::none_of(reports.begin(), reports.end(), [&](const auto& e) {
      return selector->Matches(e.first, e.second.host(), labels[e.first]);
    });
    return FleetmarkError(absl::InvalidArgumentError(absl::StrCat(
        r.command, ": run ", EscapeForTerminal(exported.run().run_id()),
        reports.empty() ? " has no results yet"
        : none_selected ? absl::StrCat(": --select matched none of its ", reports.size(),
                                       reports.size() == 1 ? " agent" : " agents")
                        : ": every result left was measured under emulation (--include_emulated keeps them)")));
  }
  out.header = RunSummary(exported.run());
  return out;
}

}  // namespace fleetmark::cli
