// The read-only JSON API of the web view, independent of the HTTP library: maps a GET
// of /api/v1/<path>?<query> to a status code and a JSON body, reading through a
// store::WebReader.
//
//   Api api(reader);
//   ApiResponse r = api.Get("runs/0b6f.../results", {{"agent", "..."}});
//   // r.status: 200, 400 (bad parameter, named), 404 (unknown path or id), 503, 500
//
// Endpoints (all GET):
//   agents                       every agent with host, labels, state
//   runs?limit=N                 newest N runs (1..1000, default 50) with jobs
//   runs/<run_id>                one run with jobs; <run_id> may be a unique prefix (>= 6
//                                hex digits, as in the CLI); an ambiguous one is 300 with
//                                {"error", "matches": [run, ...]} (at most kMaxPrefixMatches)
//   runs/<run_id>/results[?agent=<agent id or name>]   results without raw samples (an
//                                agent that does not exist is 404)
//   results/<result_id>          one result in full, raw samples included
//   compare?agents=a,b[&runs=r1,r2]   comparison (compare.h); without runs, two or more
//                                agents default to the newest run holding results of all
//                                of them (else, and "" entries, each agent's newest run
//                                with results)
//   map?agents=a,b[&runs=r1,r2][&include_emulated=1]   the strategy map of each device
//                                (engine/report/strategy_map.h; json_codec.h's
//                                StrategyMapsJson), runs chosen as for compare
//   history?case=<case_id>&agents=a,b[&limit=N][&nightly=1]   medians + change points
//   cases?agents=a,b (or agent=a) every case id with a result of those agents in any run
//                                (the cases History can chart)
//   schedules                    every schedule: cron, plan, selector, filter, paused,
//                                next and latest fire
//   recommend?profile=cpu_us=50,wait_us=2000[&run=RUN | &plan_latest=NAME][&agents=a,b][&include_emulated=1]
//                                per device the answer of `fleetmark recommend --format json`
//                                (recommend.h; default run: the newest done run with batch
//                                results); bad input 400 naming the parameter
//   changes[?since=24h|2026-12-01][&agent=NAME][&state=S][&limit=N]   confirmed changes
//                                (`fleetmark changes list`), newest first
// Thread-safety: Get may be called from many threads (the reader must allow it).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "coordinator/http/compare.h"
#include "coordinator/store/web_reader.h"
#include "engine/common/clock.h"

namespace fleetmark::http {

struct ApiResponse {
  int status = 200;
  nlohmann::json body;  // {"error": "..."} when status != 200
};

class Api {
 public:
  // `clock` (not owned, outlives the Api) is where relative times start: changes?since=24h
  // counts back from clock.Now().
  explicit Api(std::shared_ptr<store::WebReader> reader, const Clock& clock = SystemClock())
      : reader_(std::move(reader)), clock_(clock) {}

  // `path` is what follows "/api/v1/" (no leading slash); `query` the decoded
  // parameters. 400 for a parameter the endpoint does not read (naming it, a
  // did-you-mean and the endpoint's parameters), for a name or value that is not
  // printable UTF-8 (control characters included; echoed escaped, never raw).
  ApiResponse Get(std::string_view path, const std::map<std::string, std::string>& query) const;
  // The same from the query's terms in order: 400 for a name given twice.
  ApiResponse GetTerms(std::string_view path, const std::vector<std::pair<std::string, std::string>>& terms) const;

  store::WebReader& reader() const { return *reader_; }

 private:
  ApiResponse Agents() const;
  ApiResponse Runs(const std::map<std::string, std::string>& query) const;
  ApiResponse Run(std::string_view run_id) const;
  ApiResponse RunResults(std::string_view run_id, const std::map<std::string, std::string>& query) const;
  ApiResponse Result(std::string_view result_id) const;
  ApiResponse Compare(const std::map<std::string, std::string>& query) const;
  ApiResponse Map(const std::map<std::string, std::string>& query) const;
  ApiResponse Recommend(const std::map<std::string, std::string>& query) const;
  // The devices of compare and map: agents=..., runs=..., include_emulated=1.
  absl::StatusOr<std::vector<DeviceResults>> LoadDevices(const std::map<std::string, std::string>& query) const;
  // The agents of `agents=` (compare, map, history, cases): 1..kMaxDevices comma-separated
  // agent ids or names of agents that are not removed, as the CLI takes them, in the
  // given order. InvalidArgument for a count out of range; NotFound naming the first
  // unknown one — the same rule and errors for every endpoint.
  absl::StatusOr<std::vector<store::WebAgent>> ResolveAgents(const std::vector<std::string>& ids_or_names) const;
  ApiResponse History(const std::map<std::string, std::string>& query) const;
  ApiResponse Cases(const std::map<std::string, std::string>& query) const;
  ApiResponse Schedules() const;
  ApiResponse Changes(const std::map<std::string, std::string>& query) const;

  std::shared_ptr<store::WebReader> reader_;
  const Clock& clock_;
};

// Maximum devices in one comparison or history request.
inline constexpr int kMaxDevices = 16;

// Runs listed at most for an ambiguous run id prefix.
inline constexpr int kMaxPrefixMatches = 20;

}  // namespace fleetmark::http
