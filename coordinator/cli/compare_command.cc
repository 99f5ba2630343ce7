// `fleetmark compare RUN --agents A[,B,...]`: the answer first — per workload (and sweep
// point) per device the verdict of the one rule (engine/measure/verdict.h via
// strategy_map.h: decided, equivalent, undecided, provisional; --min_margin) — then the memory,
// fan-out and load scenarios per device, unsupported cases in one line, the timed cases
// side by side and the fingerprint fields that differ.
// `fleetmark compare RUN --cases A,B`: fleet A/B of two cases of the run, B against A on
// every device (engine/report/ab_compare.h).
#include <cmath>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "coordinator/cli/command.h"
#include "coordinator/cli/remote_client.h"
#include "coordinator/cli/remote_commands.h"
#include "coordinator/cli/remote_flags.h"
#include "coordinator/cli/remote_render.h"
#include "coordinator/cli/results_files.h"
#include "coordinator/cli/run_flags.h"
#include "coordinator/scheduler/same_host.h"
#include "engine/common/text.h"
#include "engine/report/ab_compare.h"
#include "engine/report/device_answers.h"
#include "engine/report/case_names.h"
#include "engine/report/scenario_metrics.h"
#include "engine/report/strategy_map.h"
#include "engine/report/text_table.h"
#include "engine/report/units.h"
#include "engine/topology/fingerprint.h"

namespace fleetmark::cli {
namespace {

constexpr char kCompareUsage[] =
    "fleetmark compare (RUN | --results FILE[,FILE...]) (--agents A[,B,...] | --cases A,B [--agents ...]) "
    "[--min_margin 0.02] [--format table|json] [--include_emulated]";

std::string MedianWithCi(const v1::CaseResult* r) {
  if (r == nullptr) return "-";
  if (r->status() != v1::CASE_STATUS_OK) return absl::StrCat("(", report::StatusWord(r->status()), ")");
  const v1::Statistics& s = r->stats();
  return absl::StrCat(report::FormatNanos(s.median_ns()), " [", report::FormatNanos(s.ci_low_ns()), ", ",
                      report::FormatNanos(s.ci_high_ns()), "]");
}

// What compare says of the compared agents that are one machine (same_host.h's
// OnOneHost, on their identities as `agents list` gives them), one note per pair in the
// order of `agents`. A listing that fails is said on stderr and gives no notes.
std::vector<std::string> OneMachineNotes(ControlClient& client, const std::vector<std::string>& agents) {
  v1::ListAgentsRequest request;
  v1::ListAgentsResponse response;
  std::unique_ptr<grpc::ClientContext> context = client.Context();
  if (grpc::Status status = client.stub().ListAgents(context.get(), request, &response); !status.ok()) {
    std::cerr << "fleetmark: compare: could not list the agents to check which share a host: "
              << EscapeForTerminal(status.error_message()) << "\n";
    return {};
  }
  std::map<std::string, const v1::AgentInfo*> by_name;
  for (const v1::AgentInfo& a : response.agents()) by_name[a.name()] = &a;
  std::vector<std::string> names;
  std::vector<scheduler::HostIdentity> hosts;
  for (const std::string& name : agents) {
    names.push_back(EscapeForTerminal(name));
    auto found = by_name.find(name);
    hosts.push_back(found == by_name.end()
                        ? scheduler::HostIdentity{}
                        : scheduler::HostIdentity{found->second->machine_id(), found->second->boot_id()});
  }
  return scheduler::OneMachineNotes(names, hosts);
}

// The devices compare reads: a run's agents, or the devices of results files.
struct CompareSource {
  std::string header;                            // RunSummary, or FilesSummary
  std::string where;                             // "run ID" or "the --results files", for messages
  std::map<std::string, v1::RunReport> reports;  // by agent name or file device label
  std::vector<std::string> order;                // the devices in the source's order
  std::vector<FileDevice> files;                 // the file devices (results files only)
  nlohmann::json json_source;                    // {"run_id": ...} or {"results_files": [...]}
};

absl::StatusOr<int> Compare(const std::vector<std::string>& args) {
  const std::string results_flag = absl::GetFlag(FLAGS_results);
  if (args.size() + (results_flag.empty() ? 0 : 1) != 1) {
    return UsageError(kCompareUsage, "compare takes one run id or --results FILE[,FILE...]");
  }
  const std::string format = absl::GetFlag(FLAGS_format);
  if (format != "table" && format != "json") {
    return FleetmarkError(
        absl::InvalidArgumentError(absl::StrCat("compare: --format: table or json, got \"", EchoValue(format), "\"")));
  }
  const double min_margin = absl::GetFlag(FLAGS_min_margin);
  if (!(min_margin >= 0 && min_margin < 1)) {
    // Streamed as before: the value as std::ostream prints a double (6 significant digits).
    std::ostringstream got;
    got << min_margin;
    return FleetmarkError(absl::InvalidArgumentError(
        absl::StrCat("compare: --min_margin: a fraction 0 <= min_margin < 1 (0.02 = 2 %), got ", got.str())));
  }
  const report::MapOptions options{.min_margin = min_margin};
  const std::string agents_flag = absl::GetFlag(FLAGS_agents), cases_flag = absl::GetFlag(FLAGS_cases);
  std::vector<std::string> agents, case_items;
  if (!agents_flag.empty()) {
    absl::StatusOr<std::vector<std::string>> listed = SplitListFlag("--agents", agents_flag);
    if (!listed.ok()) return UsageError(kCompareUsage, listed.status().message());
    agents = *listed;
    std::set<std::string> seen;
    for (const std::string& a : agents) {
      if (!seen.insert(a).second) {
        return UsageError(kCompareUsage, absl::StrCat("--agents: each agent once, got \"", EchoValue(a), "\" twice"));
      }
    }
  }
  if (!cases_flag.empty()) {
    absl::StatusOr<std::vector<std::string>> listed = SplitListFlag("--cases", cases_flag);
    if (!listed.ok()) return UsageError(kCompareUsage, listed.status().message());
    case_items = *listed;
    if (case_items.size() != 2) {
      return UsageError(kCompareUsage, absl::StrCat("--cases: two case ids or labels A,B, got ", case_items.size()));
    }
  }
  if (agents.empty() && case_items.empty() && results_flag.empty()) {
    return UsageError(kCompareUsage, "compare needs --agents A[,B,...] (devices) or --cases A,B (two cases)");
  }
  CompareSource source;
  std::optional<ControlClient> client;
  if (!results_flag.empty()) {
    absl::StatusOr<std::vector<FileDevice>> files = ReadResultsFiles("compare", results_flag);
    if (!files.ok()) return files.status();
    source.files = std::move(*files);
    std::vector<const FileDevice*> all;
    std::vector<std::string> paths;
    for (const FileDevice& d : source.files) {
      if (d.report.results_size() == 0) continue;
      all.push_back(&d);
      source.reports[d.label] = d.report;
      source.order.push_back(d.label);
      if (paths.empty() || paths.back() != d.file) paths.push_back(d.file);
    }
    source.header = FilesSummary(all);
    source.where = "the --results files";
    source.json_source = {{"results_files", paths}};
  } else {
    absl::StatusOr<ControlClient> connected = ClientFromFlags();
    if (!connected.ok()) return connected.status();
    client.emplace(*std::move(connected));
    v1::ExportResultsResponse exported;
    grpc::Status status = client->FetchResults(args[0], "", std::chrono::seconds(300), &exported);
    if (!status.ok()) return client->CallError(absl::StrCat("results of run ", args[0]), status);
    source.reports = ReportsByAgent(exported);
    for (const auto& [name, report] : source.reports) source.order.push_back(name);
    source.header = RunSummary(exported.run());
    source.where = absl::StrCat("run ", exported.run().run_id());
    source.json_source = {{"run_id", exported.run().run_id()}};
  }
  std::map<std::string, v1::RunReport>& reports = source.reports;
  if (agents.empty()) {
    agents = source.order;
    if (agents.empty()) {
      return FleetmarkError(
          absl::InvalidArgumentError(absl::StrCat("compare: ", source.where, results_flag.empty() ? " has" : " have",
                                                  " no results", results_flag.empty() ? " yet" : "")));
    }
  }
  const bool include_emulated = absl::GetFlag(FLAGS_include_emulated);
  for (const std::string& name : agents) {
    auto report = reports.find(name);
    if (report == reports.end()) {
      std::vector<std::string> names;
      for (const auto& [n, r] : reports) names.push_back(n);
      return FleetmarkError(absl::InvalidArgumentError(absl::StrCat(
          "--agents: agent \"", EscapeForTerminal(name), "\" has no results in ", source.where,
          " (agents with results: ", names.empty() ? "none" : EscapeForTerminal(absl::StrJoin(names, ", ")), ")")));
    }
    const int emulated = EmulatedResults(report->second);
    if (emulated > 0 && !include_emulated) {
      // Emulated numbers are never compared as hardware numbers: leave them out.
      v1::RunReport kept = report->second;
      kept.clear_results();
      for (const v1::CaseResult& r : report->second.results()) {
        if (!r.emulated()) *kept.add_results() = r;
      }
      if (kept.results_size() == 0) {
        return FleetmarkError(absl::InvalidArgumentError(
            absl::StrCat("--agents: agent \"", EscapeForTerminal(name), "\" measured its results in ", source.where,
                         " under user-mode emulation (qemu-user): they are the emulator's numbers, not "
                         "hardware numbers; compare them anyway with --include_emulated")));
      }
      std::cerr << "fleetmark: compare: left out " << emulated << " of " << report->second.results_size()
                << " results of \"" << EscapeForTerminal(name)
                << "\" measured under emulation (--include_emulated keeps them)\n";
      report->second = std::move(kept);
    }
  }
  // With --include_emulated an emulated side is named so in its column.
  auto side_name = [&](const std::string& name) {
    return EscapeForTerminal(EmulatedResults(reports[name]) > 0 ? absl::StrCat(name, " (emulated)") : name);
  };

  std::vector<std::string> one_machine;
  if (client) {
    one_machine = OneMachineNotes(*client, agents);
  } else {
    std::vector<const FileDevice*> compared;
    for (const std::string& name : agents) {
      for (const FileDevice& d : source.files) {
        if (d.label == name) compared.push_back(&d);
      }
    }
    one_machine = OneHostNotes(compared);
  }
  std::string one_machine_lines;
  // Below the answers they qualify (never above a table: the rows come first).
  for (const std::string& note : one_machine) absl::StrAppend(&one_machine_lines, "Note: ", note, "\n");

  std::vector<report::DeviceCases> devices;
  for (const std::string& name : agents) {
    report::DeviceCases& d = devices.emplace_back();
    d.name = side_name(name);
    for (const v1::CaseResult& r : reports[name].results()) d.results.push_back(&r);
  }

  if (!case_items.empty()) {
    // Fleet A/B.
    absl::StatusOr<report::FleetAbAnswer> ab = report::CompareCasesOverDevices(case_items, devices, options);
    if (!ab.ok()) return UsageError(kCompareUsage, EscapeForTerminal(std::string(ab.status().message())));
    if (format == "json") {
      nlohmann::json doc = report::AbJson(ab->cases, ab->devices, ab->fleet, options);
      doc.update(source.json_source);
      doc["one_machine"] = one_machine;
      std::cout << doc.dump(2) << "\n";
    } else {
      std::cout << source.header << "\n\n"
                << report::FormatAb(ab->cases, ab->devices, ab->fleet)
                << absl::StrFormat(
                       "\nB/A < 1: B is faster. Per device: the paired log-ratio of the per-round process medians "
                       "with a moderated-t 95%% interval; faster/slower only when decided (slower in every paired "
                       "round of >= 3 and the interval beyond the margin, at least %.1f%%, --min_margin), "
                       "equivalent when the interval lies within the margin, else undecided.\n",
                       min_margin * 100)
                << one_machine_lines;
    }
    return kExitOk;
  }

  // The answer: per group and point, per device, the best strategy or the tied set.
  const report::DeviceAnswers answers = report::BuildDeviceAnswers(devices, options);
  if (format == "json") {
    nlohmann::json doc = report::DeviceAnswersJson(answers, options);
    doc.update(source.json_source);
    doc["agents"] = agents;
    doc["one_machine"] = one_machine;
    std::cout << doc.dump(2) << "\n";
    return kExitOk;
  }

  std::cout << source.header << "\n\n";
  std::vector<report::Column> columns = {{"workload / point"}};
  for (const std::string& name : agents) columns.push_back({side_name(name)});
  if (!answers.points.empty()) {
    report::TextTable table(columns);
    for (const report::AnswerRow& point : answers.points) {
      std::vector<std::string> row = {point.label};
      for (const auto& p : point.devices) row.push_back(p ? report::AnswerCell(*p) : "-");
      table.AddRow(std::move(row));
    }
    std::cout << absl::StrFormat(
                     "Best strategy per workload and device (a winner only when every other strategy was "
                     "slower in every paired process round and its interval lies beyond the margin, at least "
                     "%.1f%%, --min_margin):\n",
                     min_margin * 100)
              << table.Render() << one_machine_lines << "\n";
  } else {
    std::cout << one_machine_lines;
  }
  if (!answers.scenarios.empty()) {
    std::vector<report::Column> scenario_columns = {{"scenario case"}};
    for (const std::string& name : agents) scenario_columns.push_back({side_name(name), report::Align::kRight});
    report::TextTable table(scenario_columns);
    for (const auto& [id, results] : answers.scenarios) {
      std::vector<std::string> row = {id};
      for (const v1::CaseResult* r : results) row.push_back(r == nullptr ? "-" : report::ScenarioMetricsText(*r));
      table.AddRow(std::move(row));
    }
    std::cout << "Memory (KiB/task), fan-out (total time, timeouts) and load (throughput, p99, peak RSS) per "
                 "device (one measurement each, no CI):\n"
              << table.Render() << "\n";
  }
  if (answers.unsupported > 0) {
    std::vector<std::string> per_agent;
    for (const auto& [name, n] : answers.unsupported_per_device) per_agent.push_back(absl::StrCat(name, " ", n));
    std::cout << "Unsupported: " << answers.unsupported << " case" << (answers.unsupported == 1 ? "" : "s") << " ("
              << absl::StrJoin(per_agent, ", ") << ") of strategies "
              << absl::StrJoin(answers.unsupported_strategies, ", ") << "\n\n";
  }
  if (!answers.batch.empty()) {
    std::vector<report::Column> timed = {{"case"}};
    for (const std::string& name : agents) {
      timed.push_back({absl::StrCat(side_name(name), " median [95% CI]"), report::Align::kRight});
    }
    for (size_t d = 1; d < agents.size(); ++d) {
      timed.push_back({absl::StrCat(agents[d], "/", agents[0]), report::Align::kRight});
    }
    report::TextTable table(timed);
    for (const auto& [id, sides] : answers.batch) {
      std::vector<std::string> row = {id};
      for (const v1::CaseResult* r : sides) row.push_back(MedianWithCi(r));
      for (size_t d = 1; d < agents.size(); ++d) {
        const v1::CaseResult *a = sides[0], *x = sides[d];
        std::string ratio = "-";
        if (a != nullptr && x != nullptr && a->status() == v1::CASE_STATUS_OK && x->status() == v1::CASE_STATUS_OK &&
            a->stats().median_ns() > 0 && std::isfinite(x->stats().median_ns())) {
          ratio = absl::StrFormat("%.2fx", x->stats().median_ns() / a->stats().median_ns());
        }
        row.push_back(ratio);
      }
      table.AddRow(std::move(row));
    }
    std::cout << "Timed cases side by side:\n" << table.Render();
  }
  // What differs between the devices besides the strategy (kernel, governor, ...).
  std::vector<v1::DeviceFingerprint> sides;
  for (const std::string& name : agents) {
    std::vector<const v1::CaseResult*> results;
    for (const v1::CaseResult& r : reports[name].results()) results.push_back(&r);
    sides.push_back(engine::PrevailingFingerprint(results));
  }
  if (agents.size() < 2) return kExitOk;
  std::vector<std::string> unknown;
  for (size_t d = 0; d < agents.size(); ++d) {
    if (sides[d].hash().empty()) unknown.push_back(agents[d]);
  }
  const std::vector<engine::FingerprintRow> differing = engine::DifferingFingerprintFields(sides);
  if (!unknown.empty()) {
    std::cout << "\nDevice fingerprint: unknown for " << EscapeForTerminal(absl::StrJoin(unknown, ", "))
              << " (results from an agent that sends none)\n";
  } else if (differing.empty()) {
    std::cout << "\nDevice fingerprint: the same on all (" << sides[0].hash() << ")\n";
  } else {
    std::vector<report::Column> field_columns = {{"fingerprint field"}};
    for (const std::string& name : agents) field_columns.push_back({name});
    report::TextTable fields(field_columns);
    for (const engine::FingerprintRow& row : differing) {
      std::vector<std::string> cells = {row.field};
      for (const std::string& v : row.values) cells.push_back(EscapeForTerminal(v));
      fields.AddRow(std::move(cells));
    }
    std::cout << "\nDevice fingerprint fields that differ:\n" << fields.Render();
  }
  return kExitOk;
}

}  // namespace

void RegisterCompareCommand(CommandRegistry& registry) {
  registry.Add({.name = "compare",
                .summary = "the answer per workload and device (the verdict: winner with its paired ratio, "
                           "equivalent, undecided or provisional), scenario metrics per device; --cases A,B: fleet "
                           "A/B of two cases with intervals",
                .usage = kCompareUsage,
                .run = Compare,
                .text_arguments = {"RUN"}});
}

}  // namespace fleetmark::cli
