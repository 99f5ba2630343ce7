#include "coordinator/alerts/change_json.h"

#include <httplib.h>

#include "absl/strings/str_cat.h"
#include "engine/report/units.h"

namespace fleetmark::alerts {

using nlohmann::json;

json ChangeJson(const store::ChangeRecord& change) {
  json body = json::object();
  body["change_id"] = change.change_id;
  body["state"] = change.state;
  body["agent"] = change.agent_name;
  body["agent_id"] = change.agent_id;
  body["case_id"] = change.case_id;
  body["unit"] = "ns";
  body["old_level_ns"] = change.old_level_ns;
  body["new_level_ns"] = change.new_level_ns;
  body["old_level"] = report::FormatNanos(change.old_level_ns);
  body["new_level"] = report::FormatNanos(change.new_level_ns);
  body["confirmation_median_ns"] = change.confirmation_median_ns ? json(*change.confirmation_median_ns) : json(nullptr);
  body["confirmation_median"] =
      change.confirmation_median_ns ? json(report::FormatNanos(*change.confirmation_median_ns)) : json(nullptr);
  body["ratio"] = change.old_level_ns > 0 ? json(change.new_level_ns / change.old_level_ns) : json(nullptr);
  body["min_change_percent"] = change.min_change_percent;
  body["noise_percent"] = change.noise_percent ? json(*change.noise_percent) : json(nullptr);
  body["run_id"] = change.run_id;
  body["confirmation_run_id"] = change.confirmation_run_id;
  body["reason"] = change.reason;
  body["created_unix_ms"] = absl::ToUnixMillis(change.created_at);
  body["decided_unix_ms"] =
      change.decided_at == absl::InfinitePast() ? json(nullptr) : json(absl::ToUnixMillis(change.decided_at));
  return body;
}

std::string ChangeAlertJson(const store::ChangeRecord& change, const std::string& link_base) {
  json body = ChangeJson(change);
  body["links"] = {
      {"run", absl::StrCat(link_base, "/runs/", change.run_id)},
      {"confirmation_run", absl::StrCat(link_base, "/runs/", change.confirmation_run_id)},
      {"history", absl::StrCat(link_base, "/history?case=", httplib::detail::encode_query_param(change.case_id),
                               "&agents=", change.agent_id, "&nightly=1")},
      {"api",
       absl::StrCat(link_base, "/api/v1/changes?agent=", httplib::detail::encode_query_param(change.agent_name))},
  };
  return body.dump();
}

}  // namespace fleetmark::alerts
