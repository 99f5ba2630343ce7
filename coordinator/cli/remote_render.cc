#include "coordinator/cli/remote_render.h"

#include <algorithm>
#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "coordinator/cli/case_outcomes.h"
#include "engine/common/text.h"
#include "engine/report/report.h"
#include "engine/report/results_document.h"
#include "engine/report/text_table.h"
#include "engine/topology/conditions_text.h"

namespace fleetmark::cli {

std::string FormatUnixNs(int64_t unix_ns) {
  if (unix_ns <= 0) return "-";
  return absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", absl::FromUnixNanos(unix_ns), absl::UTCTimeZone());
}

std::string RunSummary(const v1::RunInfo& run) {
  return EscapeForTerminal(absl::StrCat(
      "run ", run.run_id(), "  plan ", run.plan_name(), "  ", run.status(), run.imported() ? "  imported" : "", "  ",
      run.results(), " results", run.quick() ? "  quick" : "", "  selector '", run.selector(), "'  by ",
      run.submitted_by(), "  created ", FormatUnixNs(run.created_unix_ns()),
      run.finished_unix_ns() > 0 ? absl::StrCat("  finished ", FormatUnixNs(run.finished_unix_ns())) : ""));
}

namespace {

// "N cases: <OutcomeCounts>[, K cancelled]": the head of both outcome lines.
std::string CasesLine(int64_t total, const CaseOutcomes& outcomes) {
  std::string line = absl::StrCat(total, total == 1 ? " case: " : " cases: ", OutcomeCounts(outcomes));
  if (outcomes.cancelled > 0) {
    // A cancelled job's agent (or an interrupted local run) keeps what it finished: partial
    // results (engine/common/partial_result.h) hold the rounds of the cases in progress.
    absl::StrAppend(&line, ", ", outcomes.cancelled, " cancelled",
                    outcomes.partial > 0 ? absl::StrCat(" (", outcomes.partial, " partial)") : "");
  }
  return line;
}

}  // namespace

std::string DocumentCasesLine(const v1::ResultsDocument& document) {
  google::protobuf::RepeatedPtrField<v1::CaseResult> results;
  for (const v1::ResultsDevice& device : document.devices()) {
    for (const v1::CaseResult& r : device.results()) *results.Add() = r;
  }
  const CaseOutcomes outcomes = CountOutcomes(results);
  return CasesLine(outcomes.total(), outcomes);
}

std::string RunCasesLine(const v1::ExportResultsResponse& exported) {
  const CaseOutcomes outcomes = CountOutcomes(exported.results());
  std::map<std::string, int64_t> results_by_job;
  for (const v1::CaseResult& r : exported.results()) ++results_by_job[r.job_id()];
  int64_t planned = 0;
  std::map<std::string, int64_t> not_run;  // by why the job ended, ordered by name
  for (const v1::JobInfo& job : exported.run().jobs()) {
    planned += job.cases_total();
    const int64_t missing = static_cast<int64_t>(job.cases_total()) - results_by_job[job.job_id()];
    if (missing <= 0) continue;
    const bool expired = absl::StartsWith(job.message(), "infrastructure: expired");
    not_run[expired ? "expired" : EscapeForTerminal(job.status(), 40)] += missing;
  }
  std::string line = CasesLine(std::max<int64_t>(planned, outcomes.total()), outcomes);
  int64_t missing = 0;
  std::vector<std::string> reasons;
  for (const auto& [reason, count] : not_run) {
    missing += count;
    reasons.push_back(reason);
  }
  if (missing > 0) absl::StrAppend(&line, ", ", missing, " not run (", absl::StrJoin(reasons, ", "), ")");
  return line;
}

std::string JobsTable(const v1::RunInfo& run) {
  report::TextTable table(
      {{"agent"}, {"status"}, {"attempts", report::Align::kRight}, {"progress", report::Align::kRight}, {"message"}});
  for (const v1::JobInfo& job : run.jobs()) {
    table.AddRow({job.agent_name(), job.status(), absl::StrCat(job.attempts()),
                  absl::StrCat(job.cases_done(), "/", job.cases_total()), job.message()});
  }
  return table.Render();
}

v1::ResultsDocument FleetResultsDocument(const v1::ExportResultsResponse& exported) {
  std::map<std::string, const v1::JobInfo*> job_by_id;
  for (const v1::JobInfo& job : exported.run().jobs()) job_by_id[job.job_id()] = &job;
  std::map<std::string, v1::ResultsDevice> devices;
  for (const v1::CaseResult& result : exported.results()) {
    auto job = job_by_id.find(result.job_id());
    const std::string agent = job == job_by_id.end() ? "(unknown agent)" : job->second->agent_name();
    auto [it, inserted] = devices.try_emplace(agent);
    v1::ResultsDevice& device = it->second;
    if (inserted) {
      device.set_agent(agent);
      if (job != job_by_id.end()) {
        device.set_job_id(job->second->job_id());
        device.set_job_status(job->second->status());
      }
      if (auto host = exported.hosts().find(agent); host != exported.hosts().end())
        *device.mutable_host() = host->second;
    }
    *device.add_results() = result;
  }
  const v1::RunInfo& info = exported.run();
  v1::ResultsDocument document;
  document.set_schema_version(report::kResultsSchemaVersion);
  document.set_source("fleet");
  v1::ResultsRun* run = document.mutable_run();
  run->set_run_id(info.run_id());
  run->set_plan_name(info.plan_name());
  run->set_status(info.status());
  run->set_selector(info.selector());
  run->set_submitted_by(info.submitted_by());
  run->set_created_unix_ns(info.created_unix_ns());
  run->set_finished_unix_ns(info.finished_unix_ns());
  run->set_quick(info.quick());
  for (auto& [agent, device] : devices) *document.add_devices() = std::move(device);
  report::MarkIncomplete(&document);
  return document;
}

std::map<std::string, v1::RunReport> ReportsByAgent(const v1::ExportResultsResponse& exported) {
  return ReportsByDevice(FleetResultsDocument(exported));
}

std::map<std::string, v1::RunReport> ReportsByDevice(const v1::ResultsDocument& document) {
  std::map<std::string, v1::RunReport> reports;
  for (const v1::ResultsDevice& device : document.devices())
    reports[device.agent()] = report::DeviceReport(document, device);
  return reports;
}

std::string ArchCell(const v1::HostInfo& host) {
  return host.emulated() ? absl::StrCat(host.arch(), " (emulated)") : host.arch();
}

int EmulatedResults(const v1::RunReport& report) {
  int emulated = 0;
  for (const v1::CaseResult& r : report.results()) emulated += r.emulated() ? 1 : 0;
  return emulated;
}

std::string EmulatedNote(const v1::RunReport& report) {
  const int emulated = EmulatedResults(report);
  if (emulated == 0) return "";
  return absl::StrCat(" EMULATED (qemu-user): ", emulated, " of ", report.results_size(),
                      " results are the emulator's numbers, not hardware numbers");
}

absl::StatusOr<std::string> ResultTables(const v1::ExportResultsResponse& exported, report::TableOptions options) {
  return ResultTables(FleetResultsDocument(exported), options);
}

absl::StatusOr<std::string> ResultTables(const v1::ResultsDocument& document, report::TableOptions options) {
  std::string out;
  for (const auto& [agent, report] : ReportsByDevice(document)) {
    options.agent_name = agent;
    const std::string table = report::FormatTable(report, options);
    absl::StrAppend(&out,
                    EscapeForTerminal(absl::StrCat("== agent ", agent, " (",
                                                   report.host().cpu_model().empty() ? "?" : report.host().cpu_model(),
                                                   ", ", report.host().arch(), ")")),
                    EmulatedNote(report), "\n", table, "\n");
  }
  return out;
}

std::string ConditionsTables(const v1::ExportResultsResponse& exported, bool wide) {
  return ConditionsTables(FleetResultsDocument(exported), wide);
}

std::string ConditionsTables(const v1::ResultsDocument& document, bool wide) {
  std::string out;
  for (const auto& [agent, report] : ReportsByDevice(document)) {
    absl::StrAppend(&out, EscapeForTerminal(absl::StrCat("== conditions of agent ", agent)));
    if (wide) {
      absl::StrAppend(&out, "\n");
      for (const v1::CaseResult& r : report.results()) {
        absl::StrAppend(&out, EscapeForTerminal(r.spec().case_id()),
                        "\n  start: ", EscapeForTerminal(engine::FormatConditions(r.env_before())),
                        "\n  end:   ", EscapeForTerminal(engine::FormatConditions(r.env_after())), "\n");
      }
      absl::StrAppend(&out, "\n");
      continue;
    }
    // One line for the whole run, then only the cases whose conditions need a look.
    std::vector<const v1::EnvSnapshot*> snapshots;
    std::vector<const v1::CaseResult*> flagged;
    for (const v1::CaseResult& r : report.results()) {
      snapshots.push_back(&r.env_before());
      snapshots.push_back(&r.env_after());
      const auto needs_look = [](const v1::EnvSnapshot& e) {
        return e.trip_point_crossed() || e.gate_failures_size() > 0;
      };
      if (needs_look(r.env_before()) || needs_look(r.env_after())) flagged.push_back(&r);
    }
    absl::StrAppend(&out, " (start and end of ", report.results_size(), " case", report.results_size() == 1 ? "" : "s",
                    "; --wide lists every case)\n  ", EscapeForTerminal(engine::FormatConditionsRange(snapshots)),
                    "\n");
    // Which gates passed unchecked (no reading on that device), counted over the snapshots.
    for (const std::string& line : engine::GatesNotCheckedLines(snapshots)) {
      absl::StrAppend(&out, "  gate not checked: ", EscapeForTerminal(line), "\n");
    }
    for (const v1::CaseResult* r : flagged) {
      absl::StrAppend(&out, EscapeForTerminal(r->spec().case_id()),
                      "\n  start: ", EscapeForTerminal(engine::FormatConditions(r->env_before())),
                      "\n  end:   ", EscapeForTerminal(engine::FormatConditions(r->env_after())), "\n");
    }
    absl::StrAppend(&out, "\n");
  }
  return out;
}

}  // namespace fleetmark::cli
