// GET /api/v1/recommend: `fleetmark recommend --profile P (--run RUN | --plan_latest NAME)
// --format json` over the web reader — the same engine code (engine/report/recommend.h:
// ParseProfile, BuildStrategyMap, Recommend, RecommendationsJsonValue), so the page and
// the CLI give one answer by one rule.
//
//   RecommendRequest request{.profile = "cpu_us=50,wait_us=2000", .run = "0b6f12"};
//   absl::StatusOr<nlohmann::json> doc = AnswerRecommend(reader, request);
//
// The run: `run` (an id or a unique prefix, the CLI's rule), else the newest done run of
// plan `plan_latest` (the CLI's --plan_latest), else the newest done run holding an ok
// batch result (the Recommend page's default; at most kRecommendRunsSearched runs are
// looked at). The devices: the run's agents by name, as the CLI's; `agent_ids` keeps
// only those; results measured under emulation are left out unless asked.
// Errors: InvalidArgument naming the parameter for bad input — an empty or malformed
// profile, an unknown key, a value out of its range (ParseProfile's message, after
// "profile: "), both run and plan_latest, an unknown or malformed run, a plan without a
// done run, a run with no results for the devices; Unavailable etc. from the reader.
// The document: RecommendationsJsonValue plus "run_id", "plan_name", "run_quick" and
// "emulated_left_out" (per device name, when any). Thread-safe if the reader is.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "coordinator/store/web_reader.h"

namespace fleetmark::http {

struct RecommendRequest {
  std::string profile;                 // "cpu_us=50,wait_us=2000"
  std::string run;                     // run id or unique prefix; "" = not given
  std::string plan_latest;             // plan name; "" = not given
  std::vector<std::string> agent_ids;  // resolved agents= ; empty = every agent of the run
  bool include_emulated = false;
};

// Runs looked at for the default run (newest first).
inline constexpr int kRecommendRunsSearched = 50;

absl::StatusOr<nlohmann::json> AnswerRecommend(store::WebReader& reader, const RecommendRequest& request);

}  // namespace fleetmark::http
