#include "coordinator/store/result_rows.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"

namespace fleetmark::store::internal {
namespace {

std::string Float(double v) {
  if (std::isnan(v)) return "'NaN'::float8";
  if (std::isinf(v)) return v > 0 ? "'Infinity'::float8" : "'-Infinity'::float8";
  return absl::StrFormat("%.17g", v);
}

std::string Timestamp(int64_t unix_ns) {
  if (unix_ns <= 0) return "NULL";
  return absl::StrFormat("to_timestamp(%.6f)", static_cast<double>(unix_ns) / 1e9);
}

// PostgreSQL text cannot hold NUL bytes: drop them.
std::string Text(const pqxx::transaction_base& txn, const std::string& s) {
  if (s.find('\0') == std::string::npos) return txn.quote(s);
  std::string clean = s;
  clean.erase(std::remove(clean.begin(), clean.end(), '\0'), clean.end());
  return txn.quote(clean);
}

// Unsigned protobuf fields into signed SQL columns, clamped.
int64_t Int32(uint32_t v) { return std::min<uint32_t>(v, INT32_MAX); }
int64_t Int64(uint64_t v) { return static_cast<int64_t>(std::min<uint64_t>(v, INT64_MAX)); }

}  // namespace

std::string CaseStatusName(v1::CaseStatus status) {
  std::string name = v1::CaseStatus_Name(status);
  if (name.empty()) return absl::StrCat(static_cast<int>(status));
  return absl::AsciiStrToLower(absl::StripPrefix(name, "CASE_STATUS_"));
}

const std::string& ResultColumns() {
  static const auto* kColumns = new std::string(
      "(result_id, run_id, job_id, agent_id, case_id, scenario, workload, io_mode, strategy,"
      " strategy_label, threads, placement, status, message, stop_reason, sample_count, min_ns,"
      " median_ns, max_ns, mean_ns, stddev_ns, mad_ns, ci_low_ns, ci_high_ns, ci_half_width_percent,"
      " outliers, threads_used, peak_in_flight, cpu_user_seconds, cpu_system_seconds, allocations,"
      " allocated_bytes, peak_threads, rss_delta_bytes, throttled, samples_ns, started_at,"
      " finished_at, engine_version, result)");
  return *kColumns;
}

std::string ResultValues(const pqxx::transaction_base& txn, const v1::CaseResult& r,
                         const std::string& run_id, const std::string& agent_id) {
  const v1::CaseSpec& spec = r.spec();
  const v1::Statistics& st = r.stats();
  const v1::Counters& c = r.counters();
  std::string stop = v1::StopReason_Name(r.stop_reason());
  stop = absl::AsciiStrToLower(absl::StripPrefix(stop, "STOP_REASON_"));
  std::string label = spec.strategy().label().empty() ? spec.strategy().name() : spec.strategy().label();
  const std::string bytes = r.SerializeAsString();
  std::string row = "(";
  absl::StrAppend(&row, Text(txn, r.result_id()), "::uuid, ", Text(txn, run_id), "::uuid, ",
                  Text(txn, r.job_id()), "::uuid, ", Text(txn, agent_id), "::uuid, ");
  absl::StrAppend(&row, Text(txn, spec.case_id()), ", ", Text(txn, spec.scenario()), ", ",
                  Text(txn, spec.workload()), ", ", Text(txn, spec.io_mode()), ", ",
                  Text(txn, spec.strategy().name()), ", ", Text(txn, label), ", ",
                  Int32(spec.strategy().threads()), ", ", Text(txn, spec.placement()), ", ");
  absl::StrAppend(&row, Text(txn, CaseStatusName(r.status())), ", ", Text(txn, r.message()), ", ",
                  Text(txn, stop), ", ");
  absl::StrAppend(&row, Int64(st.count()), ", ", Float(st.min_ns()), ", ", Float(st.median_ns()), ", ",
                  Float(st.max_ns()), ", ", Float(st.mean_ns()), ", ", Float(st.stddev_ns()), ", ",
                  Float(st.mad_ns()), ", ", Float(st.ci_low_ns()), ", ", Float(st.ci_high_ns()), ", ",
                  Float(st.ci_half_width_percent()), ", ", Int64(st.outliers()), ", ");
  absl::StrAppend(&row, Int32(r.threads_used()), ", ", Int32(r.peak_in_flight()), ", ", Float(c.cpu_user_seconds()),
                  ", ", Float(c.cpu_system_seconds()), ", ",
                  Int64(c.allocations()), ", ", Int64(c.allocated_bytes()), ", ",
                  Int32(c.peak_threads()), ", ", c.rss_delta_bytes(), ", ", r.throttled() ? "true" : "false",
                  ", ");
  absl::StrAppend(&row, "'{", absl::StrJoin(r.samples_ns(), ","), "}'::bigint[], ",
                  Timestamp(r.started_unix_ns()), ", ", Timestamp(r.finished_unix_ns()), ", ",
                  Text(txn, r.engine_version()), ", ",
                  txn.quote_raw(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size()),
                  ")");
  return row;
}

}  // namespace fleetmark::store::internal
