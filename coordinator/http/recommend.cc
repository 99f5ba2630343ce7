// AnswerRecommend (recommend.h).
#include "coordinator/http/recommend.h"

#include <algorithm>
#include <map>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "engine/report/recommend.h"
#include "engine/report/strategy_map.h"
#include "engine/scenarios/registry.h"

namespace fleetmark::http {
namespace {

// `status` as bad input naming `field` (NotFound and InvalidArgument); others unchanged.
absl::Status Named(const std::string& field, const absl::Status& status) {
  if (!absl::IsNotFound(status) && !absl::IsInvalidArgument(status)) return status;
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", status.message()));
}

// Whether `results` hold an ok batch result (what a strategy map is made of).
bool HasBatchResult(const std::vector<store::WebResult>& results) {
  return std::any_of(results.begin(), results.end(), [](const store::WebResult& r) {
    return engine::IsBatch(r.result.spec()) && r.result.status() == v1::CASE_STATUS_OK;
  });
}

// The run the answer is read from (see recommend.h).
absl::StatusOr<std::string> ChooseRun(store::WebReader& reader, const RecommendRequest& request) {
  if (!request.run.empty() && !request.plan_latest.empty()) {
    return absl::InvalidArgumentError(
        "run, plan_latest: give one of them (or neither: the newest done run with batch results)");
  }
  if (!request.run.empty()) {
    absl::StatusOr<std::string> id = reader.ResolveRunId(request.run);
    if (!id.ok()) return Named("run", id.status());
    return *id;
  }
  absl::StatusOr<std::vector<store::WebRun>> runs = reader.ListRuns(1000);  // newest first
  if (!runs.ok()) return runs.status();
  if (!request.plan_latest.empty()) {
    int of_plan = 0;
    for (const store::WebRun& run : *runs) {
      if (run.plan_name != request.plan_latest) continue;
      ++of_plan;
      if (run.status == "done") return run.run_id;
    }
    return absl::InvalidArgumentError(absl::StrCat("plan_latest: no finished (done) run of plan \"",
                                                   request.plan_latest, "\" (", of_plan, " runs of it in any state)"));
  }
  int searched = 0;
  for (const store::WebRun& run : *runs) {
    if (run.status != "done" || run.results == 0) continue;
    if (++searched > kRecommendRunsSearched) break;
    absl::StatusOr<std::vector<store::WebResult>> results = reader.RunResults(run.run_id, "");
    if (!results.ok()) return results.status();
    if (HasBatchResult(*results)) return run.run_id;
  }
  return absl::InvalidArgumentError(absl::StrCat("run: no done run with batch results among the newest ",
                                                 kRecommendRunsSearched, "; give run= or plan_latest="));
}

}  // namespace

absl::StatusOr<nlohmann::json> AnswerRecommend(store::WebReader& reader, const RecommendRequest& request) {
  absl::StatusOr<report::Profile> profile = report::ParseProfile(request.profile);
  if (!profile.ok()) return Named("profile", profile.status());
  absl::StatusOr<std::string> run_id = ChooseRun(reader, request);
  if (!run_id.ok()) return run_id.status();
  absl::StatusOr<store::WebRun> run = reader.GetRun(*run_id);
  if (!run.ok()) return Named("run", run.status());
  absl::StatusOr<std::vector<store::WebResult>> results = reader.RunResults(*run_id, "");
  if (!results.ok()) return Named("run", results.status());
  // Device name -> its results, by name (the CLI's order).
  std::map<std::string, std::vector<v1::CaseResult>> devices;
  std::map<std::string, int> left_out;
  for (store::WebResult& r : *results) {
    if (!request.agent_ids.empty() &&
        std::find(request.agent_ids.begin(), request.agent_ids.end(), r.agent_id) == request.agent_ids.end()) {
      continue;
    }
    if (r.result.emulated() && !request.include_emulated) {
      ++left_out[r.agent_name];
      continue;
    }
    devices[r.agent_name].push_back(std::move(r.result));
  }
  if (devices.empty()) {
    return absl::InvalidArgumentError(
        request.agent_ids.empty() ? absl::StrCat("run: run ", *run_id, " has no results to answer from")
                                  : absl::StrCat("agents: none of the given agents has results in run ", *run_id));
  }
  std::vector<report::DeviceRecommendations> answers;
  for (const auto& [name, kept] : devices) {
    answers.push_back({name, report::Recommend(report::BuildStrategyMap(kept), *profile)});
  }
  nlohmann::json doc = report::RecommendationsJsonValue(*profile, answers);
  doc["run_id"] = *run_id;
  doc["plan_name"] = run->plan_name;
  doc["run_quick"] = run->quick;
  doc["emulated_left_out"] = left_out;
  return doc;
}

}  // namespace fleetmark::http
