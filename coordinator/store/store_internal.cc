#include "coordinator/store/store_internal.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_join.h"
#include "engine/common/text.h"

namespace fleetmark::store::internal {

bool IsUuid(std::string_view id) { return fleetmark::IsUuid(id); }

absl::Status CheckUuid(std::string_view field, std::string_view id) {
  if (IsUuid(id)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      std::string(field), ": expected a UUID (8-4-4-4-12 hex digits), got \"", std::string(id.substr(0, 64)), "\""));
}

std::string UnixNs(std::string_view column) {
  return absl::StrCat("(floor(extract(epoch from ", std::string(column), ") * 1000000)::bigint * 1000)");
}

std::string TimeParam(absl::Time t) { return absl::FormatTime("%Y-%m-%d %H:%M:%E6S+00", t, absl::UTCTimeZone()); }

std::string ResultCountSql(std::string_view run_id_column) {
  return absl::StrCat(
      "(SELECT count(*) FROM (SELECT DISTINCT c.job_id, c.case_id FROM case_results c WHERE c.run_id = ",
      std::string(run_id_column), " AND c.status <> 'cancelled') counted_cases)");
}

std::string IntervalParam(absl::Duration d) { return absl::StrCat(absl::ToInt64Microseconds(d), " microseconds"); }

pqxx::binarystring ProtoParam(const google::protobuf::Message& message) {
  return pqxx::binarystring(message.SerializeAsString());
}

bool ParseProtoField(const pqxx::field& field, google::protobuf::Message* message) {
  if (field.is_null()) return false;
  pqxx::binarystring bytes(field);
  return message->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
}

std::string UuidArray(const std::vector<std::string>& ids) { return absl::StrCat("{", absl::StrJoin(ids, ","), "}"); }

}  // namespace fleetmark::store::internal

#include <nlohmann/json.hpp>

namespace fleetmark::store::internal {

std::string TextArray(const std::vector<std::string>& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    out += '"';
    for (char c : values[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  out += '}';
  return out;
}

void Notify(pqxx::work& txn, const Notification& n) {
  const std::vector<std::string> payloads = NotificationPayloads(n);
  if (payloads.empty()) return;
  txn.exec_params("SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p", kNotificationChannel, TextArray(payloads));
}

std::string LabelsJson(const std::map<std::string, std::string>& labels) {
  nlohmann::json json = nlohmann::json::object();
  for (const auto& [key, value] : labels) json[key] = value;
  // Invalid UTF-8 in agent-provided labels is replaced rather than thrown on.
  return json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::map<std::string, std::string> ParseLabelsJson(const std::string& text) {
  std::map<std::string, std::string> labels;
  nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return labels;
  for (const auto& [key, value] : json.items()) {
    if (value.is_string()) labels[key] = value.get<std::string>();
  }
  return labels;
}

}  // namespace fleetmark::store::internal
