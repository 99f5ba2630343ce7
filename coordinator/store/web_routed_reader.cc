#include "coordinator/store/web_routed_reader.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace fleetmark::store {
namespace {

// Every answer of the replica is current enough (lists: at most --read_max_lag old).
struct AnyAnswer {
  template <typename T>
  bool operator()(const T&) const {
    return true;
  }
};

class RoutedWebReader final : public WebReader {
 public:
  RoutedWebReader(std::unique_ptr<WebReader> primary, std::unique_ptr<WebReader> replica, ReadRouter& router)
      : primary_(std::move(primary)), replica_(std::move(replica)), router_(router) {}

  absl::StatusOr<std::vector<WebAgent>> ListAgents() override {
    return Route([](WebReader& r) { return r.ListAgents(); });
  }
  absl::StatusOr<std::vector<WebRun>> ListRuns(int limit) override {
    return Route([&](WebReader& r) { return r.ListRuns(limit); });
  }
  absl::StatusOr<std::string> ResolveRunId(std::string_view id_or_prefix) override {
    return Route([&](WebReader& r) { return r.ResolveRunId(id_or_prefix); });
  }
  absl::StatusOr<std::vector<std::string>> RunIdsWithPrefix(std::string_view id_or_prefix, int limit) override {
    // None on the replica may be a run it has not replayed yet.
    return Route([&](WebReader& r) { return r.RunIdsWithPrefix(id_or_prefix, limit); },
                 [](const std::vector<std::string>& ids) { return !ids.empty(); });
  }
  absl::StatusOr<WebRun> GetRun(std::string_view run_id) override {
    return Route([&](WebReader& r) { return r.GetRun(run_id); }, &Finished);
  }
  absl::StatusOr<std::vector<WebResult>> RunResults(std::string_view run_id, std::string_view agent_id) override {
    // A run the replica holds as not finished may lack results the primary has.
    return Route([&](WebReader& r) -> absl::StatusOr<std::vector<WebResult>> {
      if (&r == replica_.get()) {
        absl::StatusOr<WebRun> run = r.GetRun(run_id);
        if (!run.ok()) return run.status();
        if (!Finished(*run)) return absl::NotFoundError("run not finished on the read replica");
      }
      return r.RunResults(run_id, agent_id);
    });
  }
  absl::StatusOr<WebResult> GetResult(std::string_view result_id) override {
    return Route([&](WebReader& r) { return r.GetResult(result_id); });
  }
  absl::StatusOr<std::string> LatestRunWithResults(std::string_view agent_id) override {
    return Route([&](WebReader& r) { return r.LatestRunWithResults(agent_id); });
  }
  absl::StatusOr<std::vector<std::string>> CaseIds(const std::vector<std::string>& agent_ids) override {
    return Route([&](WebReader& r) { return r.CaseIds(agent_ids); });
  }
  absl::StatusOr<std::vector<WebSchedule>> ListSchedules() override {
    return Route([](WebReader& r) { return r.ListSchedules(); });
  }
  absl::StatusOr<std::vector<HistoryPoint>> CaseHistory(std::string_view case_id,
                                                        const std::vector<std::string>& agent_ids, int limit,
                                                        bool scheduled_only) override {
    return Route([&](WebReader& r) { return r.CaseHistory(case_id, agent_ids, limit, scheduled_only); });
  }
  absl::StatusOr<std::vector<ChangeRecord>> ListChanges(const ChangeFilter& filter) override {
    return Route([&](WebReader& r) { return r.ListChanges(filter); });
  }

 private:
  static bool Finished(const WebRun& run) { return run.finished_unix_ns != 0; }

  // `read` on the replica when the router says so and the answer is `current`; else on
  // the primary. NotFound on the replica (a row it has not replayed) and Unavailable
  // (it is down; reported to the router) go to the primary too; other errors (a
  // malformed id, an ambiguous prefix) are the primary's answer as well and are kept.
  template <typename Read, typename Current = AnyAnswer>
  auto Route(Read&& read, Current current = {}) -> decltype(read(std::declval<WebReader&>())) {
    if (router_.UseReplica()) {
      auto answer = read(*replica_);
      if (answer.ok()) {
        if (current(*answer)) return answer;
      } else if (absl::IsUnavailable(answer.status())) {
        router_.ReportReplicaFailure(answer.status());
      } else if (!absl::IsNotFound(answer.status())) {
        return answer;
      }
    }
    return read(*primary_);
  }

  const std::unique_ptr<WebReader> primary_;
  const std::unique_ptr<WebReader> replica_;
  ReadRouter& router_;
};

}  // namespace

std::unique_ptr<WebReader> MakeRoutedWebReader(std::unique_ptr<WebReader> primary, std::unique_ptr<WebReader> replica,
                                               ReadRouter& router) {
  return std::make_unique<RoutedWebReader>(std::move(primary), std::move(replica), router);
}

}  // namespace fleetmark::store
