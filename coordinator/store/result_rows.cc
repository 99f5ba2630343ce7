#include "coordinator/store/result_rows.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>

#include <pqxx/tablewriter>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "coordinator/store/store_internal.h"
#include "engine/common/status_macros.h"
#include "engine/report/results_check.h"
#include "engine/topology/fingerprint.h"

namespace fleetmark::store::internal {
namespace {

// Unsigned protobuf fields into signed SQL columns, clamped.
int64_t Int32(uint32_t v) { return std::min<uint32_t>(v, INT32_MAX); }
int64_t Int64(uint64_t v) { return static_cast<int64_t>(std::min<uint64_t>(v, INT64_MAX)); }

std::string PlainFloat(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return absl::StrFormat("%.17g", v);
}

std::optional<std::string> CopyTimestamp(int64_t unix_ns) {
  if (unix_ns <= 0) return std::nullopt;
  return absl::FormatTime("%Y-%m-%d %H:%M:%E6S+00", absl::FromUnixNanos(unix_ns), absl::UTCTimeZone());
}

// PostgreSQL text cannot hold NUL bytes: drop them.
std::string NoNul(const std::string& s) {
  if (s.find('\0') == std::string::npos) return s;
  std::string clean = s;
  clean.erase(std::remove(clean.begin(), clean.end(), '\0'), clean.end());
  return clean;
}

}  // namespace

absl::Status CheckIncomingResult(const v1::CaseResult& result, bool job_id_too) {
  FLEETMARK_RETURN_IF_ERROR(CheckUuid("result.result_id", result.result_id()));
  if (job_id_too) FLEETMARK_RETURN_IF_ERROR(CheckUuid("result.job_id", result.job_id()));
  const std::string& case_id = result.spec().case_id();
  if (!std::all_of(case_id.begin(), case_id.end(), [](char c) { return c >= 0x20 && c < 0x7f; })) {
    return absl::InvalidArgumentError(
        "result.spec.case_id: not a case of the job's plan (bytes outside printable ASCII)");
  }
  return report::CheckResultValues(result);
}

void CopyResultRows(pqxx::work& txn, const std::string& table, size_t count,
                    const std::function<std::array<std::optional<std::string>, kResultColumnCount>(size_t)>& fields) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  pqxx::tablewriter writer(txn, table, ResultColumnNames().begin(), ResultColumnNames().end());
#pragma GCC diagnostic pop
  std::string line;
  for (size_t i = 0; i < count; ++i) {
    line.clear();
    AppendCopyLine(fields(i), &line);
    writer.write_raw_line(line);
  }
  writer.complete();
}

const std::vector<std::string>& ResultColumnNames() {
  static const auto* kNames = [] {
    std::string columns = ResultColumns().substr(1, ResultColumns().size() - 2);
    auto* names = new std::vector<std::string>();
    for (absl::string_view name : absl::StrSplit(columns, ',')) {
      names->push_back(std::string(absl::StripAsciiWhitespace(name)));
    }
    return names;
  }();
  return *kNames;
}

std::array<std::optional<std::string>, kResultColumnCount> ResultCopyFields(const v1::CaseResult& r,
                                                                            const std::string& run_id,
                                                                            const std::string& agent_id, bool emulated,
                                                                            const std::string& run_created_at) {
  const v1::CaseSpec& spec = r.spec();
  const v1::Statistics& st = r.stats();
  const v1::Counters& c = r.counters();
  std::string stop = v1::StopReason_Name(r.stop_reason());
  stop = absl::AsciiStrToLower(absl::StripPrefix(stop, "STOP_REASON_"));
  const std::string label = spec.strategy().label().empty() ? spec.strategy().name() : spec.strategy().label();
  // The fingerprint's hash as this coordinator computes it (the agent's own is not
  // trusted); NULL for a result without one.
  std::optional<std::string> fingerprint_hash;
  std::optional<std::string> fingerprint;
  if (r.has_fingerprint()) {
    fingerprint_hash = engine::FingerprintHash(r.fingerprint());
    v1::DeviceFingerprint stored = r.fingerprint();
    stored.set_hash(*fingerprint_hash);
    fingerprint = absl::StrCat("\\x", absl::BytesToHexString(stored.SerializeAsString()));
  }
  return {r.result_id(),
          run_id,
          r.job_id(),
          agent_id,
          NoNul(spec.case_id()),
          NoNul(spec.scenario()),
          NoNul(spec.workload()),
          NoNul(spec.io_mode()),
          NoNul(spec.strategy().name()),
          NoNul(label),
          absl::StrCat(Int32(spec.strategy().threads())),
          NoNul(spec.placement()),
          CaseStatusName(r.status()),
          NoNul(r.message()),
          stop,
          absl::StrCat(Int64(st.count())),
          PlainFloat(st.min_ns()),
          PlainFloat(st.median_ns()),
          PlainFloat(st.max_ns()),
          PlainFloat(st.mean_ns()),
          PlainFloat(st.stddev_ns()),
          PlainFloat(st.mad_ns()),
          PlainFloat(st.ci_low_ns()),
          PlainFloat(st.ci_high_ns()),
          PlainFloat(st.ci_half_width_percent()),
          absl::StrCat(Int64(st.outliers())),
          absl::StrCat(Int32(r.threads_used())),
          absl::StrCat(Int32(r.peak_in_flight())),
          PlainFloat(c.cpu_user_seconds()),
          PlainFloat(c.cpu_system_seconds()),
          absl::StrCat(Int64(c.allocations())),
          absl::StrCat(Int64(c.allocated_bytes())),
          absl::StrCat(Int32(c.peak_threads())),
          absl::StrCat(c.rss_delta_bytes()),
          std::string(r.throttled() ? "t" : "f"),
          absl::StrCat("{", absl::StrJoin(r.samples_ns(), ","), "}"),
          CopyTimestamp(r.started_unix_ns()),
          CopyTimestamp(r.finished_unix_ns()),
          NoNul(r.engine_version()),
          absl::StrCat("\\x", absl::BytesToHexString(r.SerializeAsString())),
          std::string(emulated ? "t" : "f"),
          fingerprint_hash,
          fingerprint,
          absl::StrCat(Int64(c.repetitions())),
          run_created_at};
}

void AppendCopyLine(const std::array<std::optional<std::string>, kResultColumnCount>& fields, std::string* line) {
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) line->push_back('\t');
    if (!fields[i]) {
      line->append("\\N");
      continue;
    }
    absl::string_view rest = *fields[i];
    while (!rest.empty()) {
      const size_t special = rest.find_first_of("\\\t\n\r");
      line->append(rest.data(), std::min(special, rest.size()));
      if (special == absl::string_view::npos) break;
      switch (rest[special]) {
        case '\t':
          line->append("\\t");
          break;
        case '\n':
          line->append("\\n");
          break;
        case '\r':
          line->append("\\r");
          break;
        default:
          line->append("\\\\");
          break;
      }
      rest.remove_prefix(special + 1);
    }
  }
}

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
      " finished_at, engine_version, result, emulated, fingerprint_hash, fingerprint, repetitions, run_created_at)");
  return *kColumns;
}

}  // namespace fleetmark::store::internal
