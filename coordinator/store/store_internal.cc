#include "coordinator/store/store_internal.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_join.h"
#include "coordinator/scheduler/same_host.h"
#include "engine/common/status_macros.h"
#include "engine/common/text.h"

namespace fleetmark::store::internal {

bool IsUuid(std::string_view id) { return fleetmark::IsUuid(id); }

absl::Status CheckDisconnectArguments(const std::vector<std::string>& agent_ids,
                                      const std::vector<std::string>& session_ids) {
  if (!session_ids.empty() && session_ids.size() != agent_ids.size()) {
    return absl::InvalidArgumentError(absl::StrCat("session_ids: ", session_ids.size(), " given for ", agent_ids.size(),
                                                   " agent_ids (one per agent, or none)"));
  }
  for (const std::string& id : agent_ids) FLEETMARK_RETURN_IF_ERROR(CheckUuid("agent_ids[]", id));
  return absl::OkStatus();
}

std::vector<ClaimedJob> ClaimedJobsOfNewRun(const std::string& run_id, const NewRun& run,
                                            const std::vector<std::pair<std::string, std::string>>& assigned) {
  v1::JobAssignment assignment;
  assignment.set_run_id(run_id);
  *assignment.mutable_plan() = run.plan;
  assignment.set_quick(run.quick);
  assignment.set_filter(run.filter);
  assignment.set_attempt(1);
  std::vector<ClaimedJob> claimed;
  claimed.reserve(assigned.size());
  for (const auto& [job_id, agent_id] : assigned) {
    ClaimedJob& job = claimed.emplace_back();
    job.agent_id = agent_id;
    job.assignment = assignment;
    job.assignment.set_job_id(job_id);
  }
  return claimed;
}

void MarkAgentsOnOneHost(std::vector<v1::AgentInfo>& agents) {
  std::vector<scheduler::HostIdentity> hosts;
  hosts.reserve(agents.size());
  for (const v1::AgentInfo& a : agents) {
    hosts.push_back(a.removed_unix_ns() != 0 ? scheduler::HostIdentity{}
                                             : scheduler::HostIdentity{a.machine_id(), a.boot_id()});
  }
  const std::vector<std::vector<size_t>> same = scheduler::SameHostAs(hosts);
  for (size_t i = 0; i < agents.size(); ++i) {
    for (size_t j : same[i]) agents[i].add_same_host_as(agents[j].name());
  }
}

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
