#include "coordinator/scheduler/same_host.h"
#include "coordinator/http/api.h"

#include <algorithm>
#include <map>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "coordinator/alerts/change_json.h"
#include "coordinator/changes/change_points.h"
#include "coordinator/changes/since.h"
#include "coordinator/http/compare.h"
#include "coordinator/http/json_codec.h"
#include "coordinator/http/recommend.h"
#include "engine/common/suggest.h"
#include "engine/common/text.h"
#include "engine/report/device_answers.h"

namespace fleetmark::http {
namespace {

using nlohmann::json;

ApiResponse Error(int status, std::string message) { return {status, json{{"error", std::move(message)}}}; }

// {"<key>": value} without copying `value` (nlohmann initializer lists deep-copy).
ApiResponse Ok(const char* key, json value) {
  ApiResponse response;
  response.body = json::object();
  response.body[key] = std::move(value);
  return response;
}

ApiResponse FromStatus(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kNotFound:
      return Error(404, std::string(status.message()));
    case absl::StatusCode::kInvalidArgument:
      return Error(400, std::string(status.message()));
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
      return Error(503, std::string(status.message()));
    default:
      return Error(500, std::string(status.message()));
  }
}

std::string Param(const std::map<std::string, std::string>& query, const std::string& name) {
  auto it = query.find(name);
  return it == query.end() ? "" : it->second;
}

// Integer parameter in [min, max]; absent -> fallback.
absl::StatusOr<int> IntParam(const std::map<std::string, std::string>& query, const std::string& name, int fallback,
                             int min, int max) {
  const std::string text = Param(query, name);
  if (text.empty()) return fallback;
  int value = 0;
  if (!absl::SimpleAtoi(text, &value) || value < min || value > max) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": integer ", min, "..", max, ", got \"", text, "\""));
  }
  return value;
}

std::vector<std::string> ListParam(const std::map<std::string, std::string>& query, const std::string& name) {
  return absl::StrSplit(Param(query, name), ',');
}

// The newest run holding results of every one of `agents` (compare's and map's default
// for two or more devices), a done one first, as LatestRunWithResults prefers: runs
// whose jobs for all of them made progress are the candidates, newest first, and the
// first whose results include each agent's is it. NotFound when they share none among
// the newest 1000 runs.
absl::StatusOr<std::string> NewestSharedRun(store::WebReader& reader, const std::vector<store::WebAgent>& agents) {
  auto runs = reader.ListRuns(1000);  // newest first
  if (!runs.ok()) return runs.status();
  for (const bool done_only : {true, false}) {
    for (const store::WebRun& run : *runs) {
      if (done_only && run.status != "done") continue;
      const bool candidate = std::all_of(agents.begin(), agents.end(), [&](const store::WebAgent& a) {
        return std::any_of(run.jobs.begin(), run.jobs.end(),
                           [&](const store::WebJob& j) { return j.agent_id == a.agent_id && j.cases_done > 0; });
      });
      if (!candidate) continue;
      bool shared = true;
      for (const store::WebAgent& a : agents) {
        auto results = reader.RunResults(run.run_id, a.agent_id);
        if (!results.ok()) return results.status();
        shared = shared && !results->empty();
      }
      if (shared) return run.run_id;
    }
  }
  return absl::NotFoundError("the devices share no run");
}

// The parameters each endpoint reads (api.h), by route ("<id>" for an id in the path):
// any other is refused by name, so a typo (`agents=` on a run's results, which read
// `agent=`) is never silently ignored.
const std::vector<std::string>* ParamsOf(const std::string& route) {
  static const auto* params = new std::map<std::string, std::vector<std::string>>{
      {"agents", {}},
      {"runs", {"limit"}},
      {"runs/<id>", {}},
      {"runs/<id>/results", {"agent"}},
      {"results/<id>", {}},
      {"compare", {"agents", "runs", "include_emulated", "min_margin", "cases"}},
      {"map", {"agents", "runs", "include_emulated"}},
      {"recommend", {"profile", "run", "plan_latest", "agents", "include_emulated"}},
      {"history", {"case", "agents", "limit", "nightly"}},
      {"cases", {"agents", "agent"}},
      {"schedules", {}},
      {"changes", {"since", "agent", "state", "limit"}},
  };
  auto it = params->find(route);
  return it == params->end() ? nullptr : &it->second;
}

// `parts` as a route of ParamsOf: "runs/<id>/results" for runs/0b6f.../results.
std::string RouteOf(const std::vector<std::string>& parts) {
  if (parts.size() == 2 && (parts[0] == "runs" || parts[0] == "results")) return parts[0] + "/<id>";
  if (parts.size() == 3 && parts[0] == "runs" && parts[2] == "results") return "runs/<id>/results";
  return parts.size() == 1 ? parts[0] : "";
}

}  // namespace

ApiResponse Api::GetTerms(std::string_view path, const std::vector<std::pair<std::string, std::string>>& terms) const {
  std::map<std::string, std::string> query;
  for (const auto& [name, value] : terms) {
    if (!query.emplace(name, value).second) {
      // Which one was meant is not for the server to guess.
      return Error(400, absl::StrCat("parameter \"", EscapeForTerminal(name, 80), "\" is given twice; give it once"));
    }
  }
  return Get(path, query);
}

ApiResponse Api::Get(std::string_view path, const std::map<std::string, std::string>& query) const {
  std::vector<std::string> parts = absl::StrSplit(absl::string_view(path.data(), path.size()), '/');
  if (!parts.empty() && parts.back().empty()) parts.pop_back();  // trailing slash
  const std::string route = RouteOf(parts);
  const std::vector<std::string>* allowed = ParamsOf(route);
  if (allowed == nullptr) return Error(404, absl::StrCat("no API endpoint /api/v1/", EscapeForTerminal(path, 200)));
  // Every endpoint's parameters are text: bytes that are not UTF-8 are refused here,
  // naming the parameter, before they reach the database (whose error would leak);
  // control characters too (a NUL in a case id was echoed back as it came). Values are
  // echoed escaped (EscapeForTerminal), never raw.
  for (const auto& [name, value] : query) {
    if (!IsValidUtf8(name) || !IsPrintableText(name, false)) {
      return Error(400, absl::StrCat("parameter \"", EscapeForTerminal(name, 80),
                                     "\": its name is not printable UTF-8 (", *TextProblem(name, false), ")"));
    }
    if (!IsValidUtf8(value)) {
      return Error(400, absl::StrCat(name, ": parameter values are UTF-8 text, got \"", EscapeForTerminal(value, 80),
                                     "\" (", *TextProblem(value, true), ")"));
    }
    if (!IsPrintableText(value, false)) {
      return Error(400, absl::StrCat(name, ": parameter values are printable text (no control characters), got \"",
                                     EscapeForTerminal(value, 80), "\" (", *TextProblem(value, false), ")"));
    }
    if (std::find(allowed->begin(), allowed->end(), name) == allowed->end()) {
      return Error(400,
                   absl::StrCat("unknown parameter \"", EscapeForTerminal(name, 80), "\" of /api/v1/", route,
                                DidYouMean(name, *allowed), "; ",
                                allowed->empty() ? "it takes no parameters"
                                                 : absl::StrCat("its parameters: ", absl::StrJoin(*allowed, ", "))));
    }
  }
  try {
    if (route == "agents") return Agents();
    if (route == "runs") return Runs(query);
    if (route == "runs/<id>") return Run(parts[1]);
    if (route == "runs/<id>/results") return RunResults(parts[1], query);
    if (route == "results/<id>") return Result(parts[1]);
    if (route == "compare") return Compare(query);
    if (route == "map") return Map(query);
    if (route == "recommend") return Recommend(query);
    if (route == "history") return History(query);
    if (route == "cases") return Cases(query);
    if (route == "schedules") return Schedules();
    if (route == "changes") return Changes(query);
  } catch (const std::exception& e) {
    // Nothing above is expected to throw; keep the server up if it does.
    return Error(500, absl::StrCat("internal error: ", e.what()));
  }
  return Error(404, absl::StrCat("no API endpoint /api/v1/", EscapeForTerminal(path, 200)));
}

ApiResponse Api::Agents() const {
  auto agents = reader_->ListAgents();
  if (!agents.ok()) return FromStatus(agents.status());
  json list = json::array();
  for (const auto& a : *agents) list.push_back(AgentJson(a));
  return Ok("agents", std::move(list));
}

ApiResponse Api::Runs(const std::map<std::string, std::string>& query) const {
  auto limit = IntParam(query, "limit", 50, 1, 1000);
  if (!limit.ok()) return FromStatus(limit.status());
  auto runs = reader_->ListRuns(*limit);
  if (!runs.ok()) return FromStatus(runs.status());
  json list = json::array();
  for (const auto& r : *runs) list.push_back(RunJson(r));
  return Ok("runs", std::move(list));
}

ApiResponse Api::Run(std::string_view id_or_prefix) const {
  auto matches = reader_->RunIdsWithPrefix(id_or_prefix, kMaxPrefixMatches);
  if (!matches.ok()) return FromStatus(matches.status());
  if (matches->empty()) {
    return Error(404,
                 absl::StrCat("no run with id ", IsUuid(id_or_prefix) ? "" : "prefix ", std::string(id_or_prefix)));
  }
  if (matches->size() > 1) {
    // Ambiguous: 300 Multiple Choices with the candidates, so the page can list them.
    json list = json::array();
    for (const std::string& id : *matches) {
      auto run = reader_->GetRun(id);
      if (run.ok()) list.push_back(RunJson(*run));
    }
    ApiResponse response =
        Error(300, absl::StrCat("run id prefix ", std::string(id_or_prefix), " is ambiguous: it matches ",
                                matches->size() == static_cast<size_t>(kMaxPrefixMatches) ? "at least " : "",
                                matches->size(), " runs; give more characters"));
    response.body["matches"] = std::move(list);
    return response;
  }
  auto run = reader_->GetRun(matches->front());
  if (!run.ok()) return FromStatus(run.status());
  return {200, json{{"run", RunJson(*run)}}};
}

ApiResponse Api::RunResults(std::string_view id_or_prefix, const std::map<std::string, std::string>& query) const {
  auto resolved = reader_->ResolveRunId(id_or_prefix);
  if (!resolved.ok()) return FromStatus(resolved.status());
  const std::string& run_id = *resolved;
  // agent=: an agent id or name (as agents= elsewhere); one that names no agent is 404,
  // not an empty list (a typo is not "no results").
  std::string agent_id;
  if (const std::string agent = Param(query, "agent"); !agent.empty()) {
    auto agents = ResolveAgents({agent});
    if (!agents.ok()) return FromStatus(agents.status());
    agent_id = agents->front().agent_id;
  }
  auto results = reader_->RunResults(run_id, agent_id);
  if (!results.ok()) return FromStatus(results.status());
  json list = json::array();
  for (const auto& r : *results) list.push_back(ResultJson(r, /*full=*/false));
  ApiResponse response = Ok("results", std::move(list));
  response.body["run_id"] = run_id;
  return response;
}

ApiResponse Api::Result(std::string_view result_id) const {
  auto result = reader_->GetResult(result_id);
  if (!result.ok()) return FromStatus(result.status());
  return Ok("result", ResultJson(*result, /*full=*/true));
}

absl::StatusOr<std::vector<store::WebAgent>> Api::ResolveAgents(const std::vector<std::string>& ids_or_names) const {
  if (ids_or_names.empty() || ids_or_names.size() > static_cast<size_t>(kMaxDevices) ||
      (ids_or_names.size() == 1 && ids_or_names[0].empty())) {
    return absl::InvalidArgumentError(absl::StrCat("agents: 1..", kMaxDevices,
                                                   " comma-separated agent ids or names, got \"",
                                                   absl::StrJoin(ids_or_names, ","), "\""));
  }
  auto agents = reader_->ListAgents();
  if (!agents.ok()) return agents.status();
  std::vector<store::WebAgent> resolved;
  for (const std::string& id_or_name : ids_or_names) {
    // An id first (also of a removed agent: its history stays), then a current name.
    const store::WebAgent* agent = nullptr;
    for (const auto& a : *agents) {
      if (a.agent_id == id_or_name) agent = &a;
    }
    for (const auto& a : *agents) {
      if (agent == nullptr && a.name == id_or_name && a.state != "removed") agent = &a;
    }
    if (agent == nullptr) {
      return absl::NotFoundError(absl::StrCat("agent ", id_or_name, " not found (agents: agent ids or names)"));
    }
    resolved.push_back(*agent);
  }
  return resolved;
}

absl::StatusOr<std::vector<DeviceResults>> Api::LoadDevices(const std::map<std::string, std::string>& query) const {
  const std::vector<std::string> requested = ListParam(query, "agents");
  std::vector<std::string> run_ids = ListParam(query, "runs");
  if (Param(query, "runs").empty()) run_ids.assign(requested.size(), "");
  if (run_ids.size() != requested.size()) {
    return absl::InvalidArgumentError(absl::StrCat("runs: one run id (or empty) per agent: ", requested.size(),
                                                   " agents, ", run_ids.size(), " runs"));
  }
  auto agents = ResolveAgents(requested);
  if (!agents.ok()) return agents.status();
  // Emulated numbers are the emulator's, not the hardware's: left out unless asked.
  const bool include_emulated = Param(query, "include_emulated") == "1";
  // No runs given for two or more devices: the newest run they all share, so the
  // comparison is of one run; each device's own newest when they share none.
  if (Param(query, "runs").empty() && agents->size() >= 2) {
    auto shared = NewestSharedRun(*reader_, *agents);
    if (shared.ok())
      run_ids.assign(agents->size(), *shared);
    else if (!absl::IsNotFound(shared.status()))
      return shared.status();
  }
  std::vector<DeviceResults> devices;
  for (size_t i = 0; i < agents->size(); ++i) {
    const store::WebAgent* agent = &(*agents)[i];
    DeviceResults& device = devices.emplace_back();
    device.agent_id = agent->agent_id;
    device.name = agent->name;
    device.emulated = agent->host.emulated();
    device.machine_id = agent->machine_id;
    device.boot_id = agent->boot_id;
    if (!run_ids[i].empty()) {
      // A run id or a unique prefix of it, the rule of /runs/<prefix> and the CLI.
      auto run_id = reader_->ResolveRunId(run_ids[i]);
      if (!run_id.ok()) return run_id.status();
      device.run_id = *run_id;
    } else {
      auto latest = reader_->LatestRunWithResults(agent->agent_id);
      if (absl::IsNotFound(latest.status())) continue;  // no results yet: an empty column
      if (!latest.ok()) return latest.status();
      device.run_id = *latest;
    }
    auto results = reader_->RunResults(device.run_id, device.agent_id);
    if (!results.ok()) return results.status();
    for (store::WebResult& r : *results) {
      if (r.result.emulated()) {
        device.emulated = true;
        if (!include_emulated) {
          ++device.emulated_left_out;
          continue;
        }
      }
      device.results.push_back(std::move(r));
    }
  }
  for (DeviceResults& device : devices) {
    std::vector<const fleetmark::v1::CaseResult*> kept;
    for (const store::WebResult& r : device.results) kept.push_back(&r.result);
    device.fingerprint = engine::PrevailingFingerprint(kept, &device.fingerprints);
  }
  return devices;
}

ApiResponse Api::Compare(const std::map<std::string, std::string>& query) const {
  // min_margin: the one winner rule's minimum margin (engine/report/strategy_map.h).
  report::MapOptions options;
  if (const std::string text = Param(query, "min_margin"); !text.empty()) {
    if (!absl::SimpleAtod(text, &options.min_margin) || !(options.min_margin >= 0 && options.min_margin < 1)) {
      return Error(400, absl::StrCat("min_margin: a fraction 0 <= min_margin < 1 (0.02 = 2 %), got \"", text, "\""));
    }
  }
  auto devices = LoadDevices(query);
  if (!devices.ok()) return FromStatus(devices.status());
  std::vector<report::DeviceCases> cases;
  for (const DeviceResults& d : *devices) {
    report::DeviceCases& c = cases.emplace_back();
    c.name = d.name;
    for (const store::WebResult& r : d.results) c.results.push_back(&r.result);
  }
  ApiResponse response{200, ComparisonJson(*devices, CompareDevices(*devices, options))};
  response.body["answers"] = report::DeviceAnswersJson(report::BuildDeviceAnswers(cases, options), options);
  // Devices that are one machine (same machine id and boot): said, as `compare` does.
  std::vector<std::string> names;
  std::vector<scheduler::HostIdentity> hosts;
  for (const DeviceResults& d : *devices) {
    names.push_back(d.name);
    hosts.push_back({d.machine_id, d.boot_id});
  }
  response.body["one_machine"] = scheduler::OneMachineNotes(names, hosts);
  // cases=A,B: the fleet A/B of two cases over the devices.
  if (const std::string items = Param(query, "cases"); !items.empty()) {
    absl::StatusOr<report::FleetAbAnswer> ab =
        report::CompareCasesOverDevices(ListParam(query, "cases"), cases, options);
    if (!ab.ok()) {
      // The engine names the CLI's flag (--cases); the web names its query parameter.
      absl::Status status = ab.status();
      if (absl::StartsWith(status.message(), "--cases: ")) {
        status = absl::Status(status.code(), status.message().substr(2));
      }
      return FromStatus(status);
    }
    response.body["ab"] = report::AbJson(ab->cases, ab->devices, ab->fleet, options);
  }
  return response;
}

ApiResponse Api::Map(const std::map<std::string, std::string>& query) const {
  auto devices = LoadDevices(query);
  if (!devices.ok()) return FromStatus(devices.status());
  return {200, StrategyMapsJson(*devices)};
}

ApiResponse Api::Recommend(const std::map<std::string, std::string>& query) const {
  RecommendRequest request{.profile = Param(query, "profile"),
                           .run = Param(query, "run"),
                           .plan_latest = Param(query, "plan_latest"),
                           .include_emulated = Param(query, "include_emulated") == "1"};
  if (!Param(query, "agents").empty()) {
    auto agents = ResolveAgents(ListParam(query, "agents"));
    if (!agents.ok()) return FromStatus(agents.status());
    for (const store::WebAgent& a : *agents) request.agent_ids.push_back(a.agent_id);
  }
  auto doc = AnswerRecommend(*reader_, request);
  if (!doc.ok()) return FromStatus(doc.status());
  return {200, std::move(*doc)};
}

ApiResponse Api::History(const std::map<std::string, std::string>& query) const {
  const std::string case_id = Param(query, "case");
  if (case_id.empty()) return Error(400, "case: a case id is required, got \"\"");
  auto agents = ResolveAgents(ListParam(query, "agents"));
  if (!agents.ok()) return FromStatus(agents.status());
  std::vector<std::string> agent_ids;
  for (const store::WebAgent& a : *agents) agent_ids.push_back(a.agent_id);
  auto limit = IntParam(query, "limit", 120, 1, 1000);
  if (!limit.ok()) return FromStatus(limit.status());
  const bool nightly = Param(query, "nightly") == "1";
  auto points = reader_->CaseHistory(case_id, agent_ids, *limit, nightly);
  if (!points.ok()) return FromStatus(points.status());
  // Each device's noise score scales its change threshold (changes::ChangePointOptions::noise).
  std::map<std::string, double> noise_of;
  if (!points->empty()) {
    auto agents = reader_->ListAgents();
    if (!agents.ok()) return FromStatus(agents.status());
    for (const store::WebAgent& a : *agents) {
      if (a.noise_percent > 0) noise_of[a.agent_id] = a.noise_percent / 100;
    }
  }
  json series = json::array();
  for (size_t begin = 0; begin < points->size();) {
    size_t end = begin;
    while (end < points->size() && (*points)[end].agent_id == (*points)[begin].agent_id) ++end;
    json list = json::array();
    std::vector<double> medians;
    // Where the device fingerprint changed (a new kernel, governor, engine, ...): an
    // event that starts a new segment. A point without a fingerprint (an older agent's)
    // is no change; the next known one is compared with the last known.
    std::vector<std::string> hashes;
    for (size_t i = begin; i < end; ++i) hashes.push_back((*points)[i].fingerprint.hash());
    const std::vector<size_t> breaks = changes::FingerprintBreaks(hashes);
    json events = json::array();
    for (size_t b : breaks) {
      // The last known fingerprint before the break.
      size_t prev = b;
      while (prev > 0 && hashes[--prev].empty()) {
      }
      const std::vector<engine::FingerprintChange> diff =
          engine::DiffFingerprints((*points)[begin + prev].fingerprint, (*points)[begin + b].fingerprint);
      events.push_back({{"index", b},
                        {"text", diff.empty() ? "device fingerprint changed" : engine::DescribeChanges(diff)},
                        {"changes", FingerprintChangesJson(diff)}});
    }
    for (size_t i = begin; i < end; ++i) {
      const store::HistoryPoint& p = (*points)[i];
      const bool ok = p.status == fleetmark::v1::CASE_STATUS_OK;
      medians.push_back(ok ? p.median_ns : 0.0);
      json point = json::object();
      point["run_id"] = p.run_id;
      point["result_id"] = p.result_id;
      point["finished_unix_ms"] = p.run_created_unix_ns / 1000000;
      point["median_ns"] = ok ? json(p.median_ns) : json(nullptr);
      point["ci_low_ns"] = ok ? json(p.ci_low_ns) : json(nullptr);
      point["ci_high_ns"] = ok ? json(p.ci_high_ns) : json(nullptr);
      point["status"] = CaseStatusName(p.status);
      point["emulated"] = p.emulated;
      point["fingerprint_hash"] = p.fingerprint.hash();
      list.push_back(std::move(point));
    }
    json entry = json::object();
    entry["agent_id"] = (*points)[begin].agent_id;
    entry["name"] = (*points)[begin].agent_name;
    changes::ChangePointOptions change_options;
    if (auto it = noise_of.find((*points)[begin].agent_id); it != noise_of.end()) change_options.noise = it->second;
    entry["noise_percent"] = change_options.noise > 0 ? json(100 * change_options.noise) : json(nullptr);
    entry["min_change_percent"] = 100 * changes::MinRelativeChange(change_options);
    entry["change_points"] = changes::DetectChangePointsInSegments(medians, breaks, change_options);
    entry["fingerprint_changes"] = std::move(events);
    entry["points"] = std::move(list);
    series.push_back(std::move(entry));
    begin = end;
  }
  ApiResponse response = Ok("series", std::move(series));
  response.body["case_id"] = case_id;
  response.body["method"] =
      "binary segmentation of log(median) per device, BIC penalty "
      "2·σ²·ln n with σ from the MAD of successive differences, "
      "changes of at least max(3%, 3 × the device's noise score) with σ at least the noise score, "
      "at least 2 runs per segment; a device fingerprint change "
      "(kernel, OS build, governor, engine, ...) starts a new segment";
  return response;
}

ApiResponse Api::Cases(const std::map<std::string, std::string>& query) const {
  std::vector<std::string> requested;
  if (!Param(query, "agents").empty()) requested = ListParam(query, "agents");
  if (!Param(query, "agent").empty()) requested.push_back(Param(query, "agent"));
  if (requested.empty()) {
    return Error(
        400, "agent: required, an agent id or name, or agents=<id or name>,..., e.g. /api/v1/cases?agent=<agent_id>");
  }
  auto agents = ResolveAgents(requested);
  if (!agents.ok()) return FromStatus(agents.status());
  std::vector<std::string> agent_ids;
  for (const store::WebAgent& a : *agents) agent_ids.push_back(a.agent_id);
  auto ids = reader_->CaseIds(agent_ids);
  if (!ids.ok()) return FromStatus(ids.status());
  return {200, json{{"agent_ids", agent_ids}, {"case_ids", *ids}}};
}

ApiResponse Api::Schedules() const {
  auto schedules = reader_->ListSchedules();
  if (!schedules.ok()) return FromStatus(schedules.status());
  json list = json::array();
  for (const store::WebSchedule& s : *schedules) list.push_back(ScheduleJson(s));
  return Ok("schedules", std::move(list));
}

ApiResponse Api::Changes(const std::map<std::string, std::string>& query) const {
  int64_t since_unix_ns = 0;
  if (const std::string since = Param(query, "since"); !since.empty()) {
    auto t = changes::ParseSince(since, clock_.Now(), "since");
    if (!t.ok()) return FromStatus(t.status());
    since_unix_ns = absl::ToUnixNanos(*t);
  }
  auto limit = IntParam(query, "limit", 1000, 1, 10000);
  if (!limit.ok()) return FromStatus(limit.status());
  auto filter =
      store::ChangeFilterOf(since_unix_ns, Param(query, "agent"), Param(query, "state"), static_cast<uint32_t>(*limit));
  if (!filter.ok()) return FromStatus(filter.status());
  auto found = reader_->ListChanges(*filter);
  if (!found.ok()) return FromStatus(found.status());
  json list = json::array();
  for (const store::ChangeRecord& c : *found) list.push_back(alerts::ChangeJson(c));
  return Ok("changes", std::move(list));
}

}  // namespace fleetmark::http
