// `fleetmark export` and `fleetmark compare`.
#include <cmath>
#include <iostream>
#include <map>
#include <optional>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "coordinator/cli/remote_client.h"
#include "coordinator/cli/remote_commands.h"
#include "coordinator/cli/remote_render.h"
#include "coordinator/cli/result_output.h"
#include "coordinator/cli/run_flags.h"
#include "engine/report/report.h"
#include "engine/topology/fingerprint.h"
#include "engine/report/text_table.h"
#include "engine/report/units.h"
#include "google/protobuf/util/json_util.h"
#include "engine/common/text.h"

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

// CSV of every agent, with a leading "agent" column (and engine/report's "emulated"
// column per result).
absl::StatusOr<std::string> CsvByAgent(const v1::ExportResultsResponse& exported) {
  std::string out;
  bool header_done = false;
  for (const auto& [agent, report] : ReportsByAgent(exported)) {
    absl::StatusOr<std::string> csv = report::FormatReport(report, report::ReportFormat::kCsv);
    if (!csv.ok()) return csv.status();
    bool first_line = true;
    for (absl::string_view line : absl::StrSplit(*csv, '\n', absl::SkipEmpty())) {
      if (first_line) {
        first_line = false;
        if (!header_done) absl::StrAppend(&out, "agent,", line, "\n");
        header_done = true;
        continue;
      }
      absl::StrAppend(&out, agent, ",", line, "\n");  // agent names need no CSV quoting
    }
  }
  return out;
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
      text = CsvByAgent(*exported);
      break;
    case report::ReportFormat::kJson: {
      std::string json;
      google::protobuf::util::JsonPrintOptions print;
      print.add_whitespace = true;
      print.preserve_proto_field_names = true;
      auto status = google::protobuf::util::MessageToJsonString(*exported, &json, print);
      if (!status.ok())
        text = absl::InternalError(std::string(status.message()));
      else
        text = json;
      break;
    }
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
    std::cerr << "wrote " << exported->results_size() << " results to " << options->out << "\n";
  }
  return kExitOk;
}

std::string MedianWithCi(const v1::CaseResult* r) {
  if (r == nullptr) return "-";
  if (r->status() != v1::CASE_STATUS_OK) {
    std::string name = v1::CaseStatus_Name(r->status());
    return absl::StrCat("(", name.substr(std::min<size_t>(name.size(), 12)), ")");
  }
  const v1::Statistics& s = r->stats();
  return absl::StrCat(report::FormatNanos(s.median_ns()), " [", report::FormatNanos(s.ci_low_ns()), ", ",
                      report::FormatNanos(s.ci_high_ns()), "]");
}

int Compare(const std::vector<std::string>& args) {
  static const char kUsage[] = "fleetmark compare RUN --agents A,B [--include_emulated]";
  if (args.size() != 1) return RemoteUsageError(kUsage, "compare takes one run id");
  absl::StatusOr<std::vector<std::string>> listed = SplitListFlag("--agents", absl::GetFlag(FLAGS_agents));
  if (!listed.ok()) return RemoteUsageError(kUsage, std::string(listed.status().message()));
  const std::vector<std::string>& agents = *listed;
  if (agents.size() != 2) {
    return RemoteUsageError(kUsage,
                            absl::StrCat("--agents: two agent names A,B, got \"", absl::GetFlag(FLAGS_agents), "\""));
  }
  if (agents[0] == agents[1]) {
    return RemoteUsageError(kUsage, absl::StrCat("--agents: two different agents, got \"", agents[0], "\" twice"));
  }
  int code = 0;
  std::optional<ControlClient> client = ClientFromFlags(&code);
  if (!client) return code;
  std::optional<v1::ExportResultsResponse> exported = Fetch(*client, args[0], "", &code);
  if (!exported) return code;
  std::map<std::string, v1::RunReport> reports = ReportsByAgent(*exported);
  const bool include_emulated = absl::GetFlag(FLAGS_include_emulated);
  for (const std::string& name : agents) {
    auto report = reports.find(name);
    const int emulated = report == reports.end() ? 0 : EmulatedResults(report->second);
    if (emulated > 0 && !include_emulated) {
      // Emulated numbers are never compared as hardware numbers: leave them out.
      v1::RunReport kept = report->second;
      kept.clear_results();
      for (const v1::CaseResult& r : report->second.results()) {
        if (!r.emulated()) *kept.add_results() = r;
      }
      if (kept.results_size() == 0) {
        std::cerr << "fleetmark: --agents: agent \"" << name << "\" measured its results in run "
                  << exported->run().run_id()
                  << " under user-mode emulation (qemu-user): they are the emulator's numbers, not "
                     "hardware numbers; compare them anyway with --include_emulated\n";
        return kExitUsage;
      }
      std::cerr << "fleetmark: compare: left out " << emulated << " of " << report->second.results_size()
                << " results of \"" << name << "\" measured under emulation (--include_emulated keeps them)\n";
      report->second = std::move(kept);
    }
    if (reports.count(name) == 0) {
      std::vector<std::string> names;
      for (const auto& [n, r] : reports) names.push_back(n);
      std::cerr << "fleetmark: --agents: agent \"" << EscapeForTerminal(name) << "\" has no results in run "
                << exported->run().run_id()
                << " (agents with results: " << (names.empty() ? "none" : EscapeForTerminal(absl::StrJoin(names, ", ")))
                << ")\n";
      return kExitUsage;
    }
  }
  // case id -> (result of A, result of B), in the order cases first appear.
  std::vector<std::string> order;
  std::map<std::string, std::pair<const v1::CaseResult*, const v1::CaseResult*>> cases;
  for (int side = 0; side < 2; ++side) {
    for (const v1::CaseResult& r : reports[agents[side]].results()) {
      auto [it, inserted] = cases.try_emplace(r.spec().case_id());
      if (inserted) order.push_back(r.spec().case_id());
      (side == 0 ? it->second.first : it->second.second) = &r;
    }
  }
  // With --include_emulated an emulated side is named so in its column.
  auto side_name = [&](const std::string& name) {
    return EmulatedResults(reports[name]) > 0 ? absl::StrCat(name, " (emulated)") : name;
  };
  report::TextTable table({{"case"},
                           {absl::StrCat(side_name(agents[0]), " median [95% CI]"), report::Align::kRight},
                           {absl::StrCat(side_name(agents[1]), " median [95% CI]"), report::Align::kRight},
                           {absl::StrCat(agents[1], "/", agents[0]), report::Align::kRight}});
  for (const std::string& case_id : order) {
    const auto& [a, b] = cases[case_id];
    std::string ratio = "-";
    if (a != nullptr && b != nullptr && a->status() == v1::CASE_STATUS_OK && b->status() == v1::CASE_STATUS_OK &&
        a->stats().median_ns() > 0 && std::isfinite(b->stats().median_ns())) {
      ratio = absl::StrFormat("%.2fx", b->stats().median_ns() / a->stats().median_ns());
    }
    table.AddRow({case_id, MedianWithCi(a), MedianWithCi(b), ratio});
  }
  std::cout << RunSummary(exported->run()) << "\n\n" << table.Render();
  // What differs between the two devices besides the strategy (kernel, governor, ...).
  std::vector<v1::DeviceFingerprint> sides;
  for (const std::string& name : agents) {
    std::vector<const v1::CaseResult*> results;
    for (const v1::CaseResult& r : reports[name].results()) results.push_back(&r);
    sides.push_back(engine::PrevailingFingerprint(results));
  }
  const std::vector<engine::FingerprintRow> differing = engine::DifferingFingerprintFields(sides);
  if (sides[0].hash().empty() || sides[1].hash().empty()) {
    std::cout << "\nDevice fingerprint: unknown for "
              << EscapeForTerminal(sides[0].hash().empty() ? agents[0] : agents[1])
              << " (results from an agent that sends none)\n";
  } else if (differing.empty()) {
    std::cout << "\nDevice fingerprint: the same on both (" << sides[0].hash() << ")\n";
  } else {
    report::TextTable fields({{"fingerprint field"}, {agents[0]}, {agents[1]}});
    for (const engine::FingerprintRow& row : differing) {
      fields.AddRow({row.field, EscapeForTerminal(row.values[0]), EscapeForTerminal(row.values[1])});
    }
    std::cout << "\nDevice fingerprint fields that differ:\n" << fields.Render();
  }
  return kExitOk;
}

}  // namespace

void RegisterResultsRemoteCommands(CommandRegistry& registry) {
  registry.Add({.name = "export",
                .summary = "export a run's results (csv with an agent column, json, gbench-json for one agent)",
                .usage = "fleetmark export RUN --format csv|json|gbench-json|table [--out FILE] [--agents NAME]",
                .run = Export});
  registry.Add({.name = "compare",
                .summary = "compare two agents of a run side by side: medians with CIs and their ratio",
                .usage = "fleetmark compare RUN --agents A,B [--include_emulated]",
                .run = Compare});
}

}  // namespace fleetmark::cli
