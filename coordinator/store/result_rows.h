// Turning CaseResults into case_results rows: the column list and each result's
// fields as text for COPY (pqxx::stream_to into case_results, or a staging table for
// INSERT ... ON CONFLICT (result_id) DO NOTHING), so a batch is stored at COPY speed.
#pragma once

#include <array>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "absl/status/status.h"

#include "fleetmark/v1/result.pb.h"

namespace fleetmark::store::internal {

// The columns of a case_results row (ResultColumns).
inline constexpr size_t kResultColumnCount = 45;

// The one check of a result from outside (an agent's, InsertResults; an imported one,
// ImportResults, whose job is the import's), InvalidArgument naming the field, in this
// order: result.result_id a UUID, result.job_id a UUID (`job_id_too`), the case id
// printable ASCII (no plan has another), report::CheckResultValues (engine/report/results_check.h).
absl::Status CheckIncomingResult(const v1::CaseResult& result, bool job_id_too);

// Streams `count` rows into `table` (case_results or a table LIKE it) with COPY, row i
// being `fields(i)` (ResultCopyFields), one raw text line each (AppendCopyLine).
void CopyResultRows(pqxx::work& txn, const std::string& table, size_t count,
                    const std::function<std::array<std::optional<std::string>, kResultColumnCount>(size_t)>& fields);

// "(result_id, run_id, job_id, agent_id, case_id, ...)", the order of ResultCopyFields.
const std::string& ResultColumns();

// The column names of ResultColumns, for COPY.
const std::vector<std::string>& ResultColumnNames();

// The row of `result` as text fields for COPY (in ResultColumns' order;
// the run and agent come from the result's job, not from the agent's message,
// `run_created_at` (the run's creation time as a timestamptz literal: the partition
// key, migration 0014) from the run, and `emulated` from the agent's stored HostInfo; doubles
// keep 17 significant digits, NaN/Infinity stay; nullopt = NULL; not escaped:
// AppendCopyLine does that).
std::array<std::optional<std::string>, kResultColumnCount> ResultCopyFields(const v1::CaseResult& result,
                                                                            const std::string& run_id,
                                                                            const std::string& agent_id, bool emulated,
                                                                            const std::string& run_created_at);

// The fields as one line of COPY's text format (tab-separated, NULL as \N, backslash,
// tab, newline and carriage return escaped; no trailing newline), appended to `line`.
// Copies runs of plain characters at once: pqxx::stream_to's own escaper goes
// character by character and was ~20% of the coordinator's CPU while ingesting.
// Format: PostgreSQL 15 docs, COPY, "Text Format".
void AppendCopyLine(const std::array<std::optional<std::string>, kResultColumnCount>& fields, std::string* line);

// "ok", "unsupported", ... (the enum name without its prefix, lower case).
std::string CaseStatusName(v1::CaseStatus status);

}  // namespace fleetmark::store::internal
