// Text rendering shared by the remote commands: run summaries, job tables, per-agent
// result tables (engine/report's table format, one per agent), times. Text that came
// from agents (names, host fields, messages) is written as EscapeForTerminal
// (engine/common/text.h) does: never a raw control character.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/report/table.h"
#include "fleetmark/v1/control.pb.h"
#include "fleetmark/v1/result.pb.h"

namespace fleetmark::cli {

// "2026-11-30 12:34:56 UTC"; "-" for 0.
std::string FormatUnixNs(int64_t unix_ns);

// "run <id>  plan <name>  <status>  <n> results  selector '<s>'  by <who>  <created>".
std::string RunSummary(const v1::RunInfo& run);

// The outcome line of a run, one rule for `submit --wait` and `runs show`: its planned
// cases (the jobs' cases_total; the results' count when larger) and how they ended —
// "18 cases: 0 ok, 0 unsupported, 0 resource exhausted, 0 failed, 18 not run (expired)"
// — the results' outcomes (OutcomeCounts, case_outcomes.h), then ", N cancelled", then
// the planned cases with no result by why their jobs ended ("expired" for a job that
// --queue_offline expired, else the job's status: "failed", "cancelled", "queued",
// "running", ...; several reasons joined by ", "). "1 case" singular.
std::string RunCasesLine(const v1::ExportResultsResponse& exported);

// The outcome line of a results file (`fleetmark show`): its results' outcomes only (a
// file holds no planned cases), "4 cases: 3 ok, 1 unsupported, 0 resource exhausted, 0
// failed[, N cancelled]", by RunCasesLine's rule.
std::string DocumentCasesLine(const v1::ResultsDocument& document);

// The run's jobs: agent, status, attempts, progress, message.
std::string JobsTable(const v1::RunInfo& run);

// The run's results document (engine/report/results_document.h): source "fleet", the
// run, and one device per agent with results (by the run's job → agent map; results of
// an unknown job under "(unknown agent)"), ordered by agent name, with its job and host.
v1::ResultsDocument FleetResultsDocument(const v1::ExportResultsResponse& exported);

// One RunReport per device of FleetResultsDocument, keyed and ordered by agent name.
std::map<std::string, v1::RunReport> ReportsByAgent(const v1::ExportResultsResponse& exported);
// One RunReport per device of `document` (report::DeviceReport), keyed and ordered by
// device name.
std::map<std::string, v1::RunReport> ReportsByDevice(const v1::ResultsDocument& document);

// "== agent <name> (<cpu model>, <arch>)\n<table>" for each agent with results; the
// header of an agent with results measured under emulation says so (EmulatedNote).
// `options` as report::FormatTable takes them; agent_name is set per agent. The
// default is the full table (export --format table).
absl::StatusOr<std::string> ResultTables(const v1::ExportResultsResponse& exported, report::TableOptions options = {});
// The same tables of a results document's devices (`fleetmark show FILE`).
absl::StatusOr<std::string> ResultTables(const v1::ResultsDocument& document, report::TableOptions options = {});

// "== conditions of agent <name>" for each agent with results: the range of its stored
// conditions over the start and end of every case (engine::FormatConditionsRange), then
// the cases whose start or end crossed a trip point or failed a gate, with both
// snapshots (engine::FormatConditions). `wide`: every case's start and end instead.
// Escaped for a terminal.
std::string ConditionsTables(const v1::ExportResultsResponse& exported, bool wide);
// The same of a results document's devices.
std::string ConditionsTables(const v1::ResultsDocument& document, bool wide);

// "aarch64", or "aarch64 (emulated)" for a host under user-mode emulation.
std::string ArchCell(const v1::HostInfo& host);

// "" when no result of `report` was measured under emulation, else
// " EMULATED (qemu-user): N of M results are the emulator's numbers, not hardware numbers".
std::string EmulatedNote(const v1::RunReport& report);

// The results of `report` measured under emulation (CaseResult.emulated).
int EmulatedResults(const v1::RunReport& report);

}  // namespace fleetmark::cli
