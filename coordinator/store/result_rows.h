// Turning CaseResults into case_results rows: the column list and one VALUES tuple
// per result, built with the connection's quoting (libpqxx quote / quote_raw), so a
// batch is stored with one multi-row INSERT ... ON CONFLICT (result_id) DO NOTHING.
#pragma once

#include <string>

#include <pqxx/pqxx>

#include "fleetmark/v1/result.pb.h"

namespace fleetmark::store::internal {

// "(result_id, run_id, job_id, agent_id, case_id, ...)" matching ResultValues.
const std::string& ResultColumns();

// "( ... )": the row of `result`, whose run and agent come from its job (not from the
// agent's message). Doubles keep 17 significant digits; NaN/Inf stay NaN/Infinity.
std::string ResultValues(const pqxx::transaction_base& txn, const v1::CaseResult& result,
                         const std::string& run_id, const std::string& agent_id);

// "ok", "unsupported", ... (the enum name without its prefix, lower case).
std::string CaseStatusName(v1::CaseStatus status);

}  // namespace fleetmark::store::internal
