// Reads off the primary (--read_database_uri): a real fleetmark-coordinator over a
// private PostgreSQL primary and a real streaming replica of it (deploy/pg.sh replica:
// pg_basebackup -R, its own port), a real agent running a job. Checked through the web
// API, /healthz, /metrics, the replica's pg_stat_activity and ControlService.ListRuns:
//   - a run written on the primary is listed by the web API once the replica replayed
//     it, from the replica;
//   - with replay paused (pg_wal_replay_pause()) past --read_max_lag, reads go to the
//     primary (a new run is listed though the replica lacks it) and back after resume;
//   - the replica stopped: the web view keeps serving from the primary; restarted: the
//     replica serves again.
#include <httplib.h>

#include <fstream>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "fleetmark/v1/control.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "tests/integration/fleet_harness.h"
#include "tests/integration/subprocess.h"

namespace fleetmark::testing {
namespace {

using ::testing::HasSubstr;

constexpr absl::Duration kWait = absl::Seconds(60);  // hang guard of each wait

class ReplicaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir("fleetmark-replica");
    ASSERT_FALSE(dir_.empty());
    auto primary = PrivatePostgres::Start();
    ASSERT_TRUE(primary.ok()) << primary.status();
    primary_ = *std::move(primary);
    replica_dir_ = dir_ + "/replica";
    auto replica_uri = PgSh({"replica", primary_->dir(), replica_dir_});
    ASSERT_TRUE(replica_uri.ok()) << replica_uri.status();
    replica_uri_ = *replica_uri;
    ASSERT_EQ(Psql(replica_uri_, "SELECT pg_is_in_recovery()").value_or(""), "t");

    CoordinatorConfig config;
    config.database_uri = primary_->uri();
    config.coordinator_id = "replica-coordinator";
    config.extra_flags = {"--http_address=127.0.0.1:0", absl::StrCat("--read_database_uri=", replica_uri_),
                          "--read_max_lag=1s"};
    auto coordinator = CoordinatorProcess::Start(dir_, config);
    ASSERT_TRUE(coordinator.ok()) << coordinator.status();
    coordinator_ = *std::move(coordinator);
    auto http_port = WebViewPort(*coordinator_);
    ASSERT_TRUE(http_port.ok()) << http_port.status();
    http_port_ = *http_port;
    control_ = std::make_unique<ControlClient>(coordinator_->address(), config.admin_token);

    AgentConfig agent;
    agent.name = "replica-agent";
    agent.token = config.enrollment_token;
    auto started = AgentProcess::Start(dir_, coordinator_->address(), agent);
    ASSERT_TRUE(started.ok()) << started.status();
    agent_ = *std::move(started);
    ASSERT_TRUE(control_->WaitOnline(1, kWait).ok());
  }

  void TearDown() override {
    if (HasFailure() && coordinator_ != nullptr) {
      const std::string log = coordinator_->Log();
      std::cerr << "---- coordinator log (tail)\n" << log.substr(log.size() > 4000 ? log.size() - 4000 : 0) << "\n";
    }
    agent_.reset();
    coordinator_.reset();
    if (!replica_dir_.empty()) (void)PgSh({"stop", replica_dir_});
    primary_.reset();
    RemoveTree(dir_);
  }

  static absl::StatusOr<std::string> PgSh(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {FLEETMARK_SOURCE_DIR "/deploy/pg.sh"};
    argv.insert(argv.end(), args.begin(), args.end());
    absl::StatusOr<std::string> out = RunCommand(argv, absl::Seconds(120));
    if (!out.ok()) return out.status();
    return std::string(absl::StripAsciiWhitespace(*out));
  }

  // GET `path`: {status, body}; status 0 when the request failed.
  std::pair<int, std::string> Get(const std::string& path) {
    httplib::Client client("127.0.0.1", http_port_);
    client.set_read_timeout(30, 0);  // a hang guard only
    auto res = client.Get(path.c_str());
    if (!res) return {0, ""};
    return {res->status, res->body};
  }
  // "replica" or "primary" from /healthz ("" when it does not answer 200).
  std::string Reads() {
    auto [status, body] = Get("/healthz");
    if (status != 200) return "";
    return nlohmann::json::parse(body).value("reads", "");
  }
  // Whether the web API's run list (GET /api/v1/runs) holds `run_id`.
  bool WebListsRun(const std::string& run_id) {
    auto [status, body] = Get("/api/v1/runs");
    return status == 200 && absl::StrContains(body, run_id);
  }
  std::string SubmitAndWait() {
    auto run = control_->Submit(ReducedS1Plan({"direct"}, {"arithmetic"}, 10, 3), "");
    EXPECT_TRUE(run.ok()) << run.status();
    if (!run.ok()) return "";
    auto ended = control_->WaitRunEnded(run->run_id(), absl::Minutes(3));
    EXPECT_TRUE(ended.ok()) << ended.status();
    EXPECT_EQ(ended.ok() ? ended->status() : "", "done");
    return run->run_id();
  }
  int64_t ReplicaHasRun(const std::string& run_id) {
    return PsqlInt(replica_uri_, absl::StrCat("SELECT count(*) FROM runs WHERE run_id = '", run_id, "'")).value_or(-1);
  }
  // Connections of `application_name` on the replica.
  int64_t ReplicaConnections(const std::string& application_name) {
    return PsqlInt(replica_uri_, absl::StrCat("SELECT count(*) FROM pg_stat_activity WHERE application_name = '",
                                              application_name, "'"))
        .value_or(-1);
  }
  // ControlService.ListRuns (what `fleetmark runs list` calls): the run ids.
  absl::StatusOr<std::vector<std::string>> ListRunIds() {
    auto channel = grpc::CreateChannel(coordinator_->address(), grpc::InsecureChannelCredentials());
    auto stub = v1::ControlService::NewStub(channel);
    grpc::ClientContext context;
    context.AddMetadata("authorization", absl::StrCat("Bearer ", coordinator_->config().admin_token));
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    v1::ListRunsRequest request;
    v1::ListRunsResponse response;
    grpc::Status status = stub->ListRuns(&context, request, &response);
    if (!status.ok()) return absl::UnavailableError(status.error_message());
    std::vector<std::string> ids;
    for (const v1::RunInfo& run : response.runs()) ids.push_back(run.run_id());
    return ids;
  }

  std::string dir_, replica_dir_, replica_uri_;
  int http_port_ = 0;
  std::unique_ptr<PrivatePostgres> primary_;
  std::unique_ptr<CoordinatorProcess> coordinator_;
  std::unique_ptr<ControlClient> control_;
  std::unique_ptr<AgentProcess> agent_;
};

TEST_F(ReplicaTest, ARunReplayedOnTheReplicaIsReadFromIt) {
  const std::string run_id = SubmitAndWait();
  ASSERT_FALSE(run_id.empty());
  ASSERT_TRUE(WaitUntil([&] { return ReplicaHasRun(run_id) == 1; }, kWait));
  ASSERT_TRUE(WaitUntil([&] { return Reads() == "replica"; }, kWait)) << Get("/healthz").second;
  EXPECT_TRUE(WebListsRun(run_id));
  auto [status, body] = Get(absl::StrCat("/api/v1/runs/", run_id, "/results"));
  EXPECT_EQ(status, 200) << body;
  EXPECT_THAT(body, HasSubstr("arithmetic"));
  // The web view's and the control service's readers hold connections on the replica.
  EXPECT_GT(ReplicaConnections("fleetmark-web"), 0);
  auto ids = ListRunIds();
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_THAT(*ids, ::testing::Contains(run_id));
  EXPECT_GT(ReplicaConnections("fleetmark-coordinator replica-coordinator (reads)"), 0);
  auto [metrics_status, metrics] = Get("/metrics");
  ASSERT_EQ(metrics_status, 200);
  EXPECT_THAT(metrics, HasSubstr("fleetmark_read_server{server=\"replica\"} 1"));
  EXPECT_THAT(metrics, HasSubstr("fleetmark_read_replica_lag_seconds "));
  // Prometheus's own parser and linter accept the replica's families.
  const std::string file = dir_ + "/metrics.txt";
  std::ofstream(file) << metrics;
  absl::StatusOr<std::string> check = RunCommand({"sh", "-c", "promtool check metrics < '" + file + "' 2>&1"});
  ASSERT_TRUE(check.ok()) << "promtool check metrics: " << check.status() << "\n" << metrics;
  EXPECT_EQ(*check, "") << metrics;
}

TEST_F(ReplicaTest, ReplayPausedBeyondTheLagLimitSendsReadsToThePrimaryAndBack) {
  const std::string first = SubmitAndWait();
  ASSERT_TRUE(WaitUntil([&] { return Reads() == "replica" && ReplicaHasRun(first) == 1; }, kWait));
  ASSERT_TRUE(Psql(replica_uri_, "SELECT pg_wal_replay_pause()").ok());
  const std::string second = SubmitAndWait();
  ASSERT_FALSE(second.empty());
  // Over --read_max_lag=1s behind: the primary answers, so the new run is listed
  // although the replica has not replayed it.
  ASSERT_TRUE(WaitUntil([&] { return Reads() == "primary"; }, kWait)) << Get("/healthz").second;
  EXPECT_EQ(ReplicaHasRun(second), 0);
  EXPECT_TRUE(WebListsRun(second));
  auto ids = ListRunIds();
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_THAT(*ids, ::testing::Contains(second));
  auto [metrics_status, metrics] = Get("/metrics");
  ASSERT_EQ(metrics_status, 200);
  EXPECT_THAT(metrics, HasSubstr("fleetmark_read_server{server=\"primary\"} 1"));
  EXPECT_THAT(coordinator_->Log(), HasSubstr("over --read_max_lag 1s"));

  ASSERT_TRUE(Psql(replica_uri_, "SELECT pg_wal_replay_resume()").ok());
  ASSERT_TRUE(WaitUntil([&] { return Reads() == "replica"; }, kWait)) << Get("/healthz").second;
  EXPECT_EQ(ReplicaHasRun(second), 1);
  EXPECT_TRUE(WebListsRun(second));
}

TEST_F(ReplicaTest, TheWebViewKeepsServingWhileTheReplicaIsStoppedAndRestarted) {
  const std::string run_id = SubmitAndWait();
  ASSERT_TRUE(WaitUntil([&] { return Reads() == "replica" && ReplicaHasRun(run_id) == 1; }, kWait));
  ASSERT_TRUE(PgSh({"stop", replica_dir_}).ok());
  // The first request after the stop may be the one that finds the replica gone: it is
  // answered from the primary all the same.
  EXPECT_TRUE(WebListsRun(run_id));
  auto [status, body] = Get(absl::StrCat("/api/v1/runs/", run_id));
  EXPECT_EQ(status, 200) << body;
  ASSERT_TRUE(WaitUntil([&] { return Reads() == "primary"; }, kWait)) << Get("/healthz").second;
  EXPECT_THAT(Get("/healthz").second, HasSubstr("\"status\":\"ok\""));
  const std::string during = SubmitAndWait();
  EXPECT_TRUE(WebListsRun(during));

  auto restarted = PgSh({"start", replica_dir_});
  ASSERT_TRUE(restarted.ok()) << restarted.status();
  replica_uri_ = *restarted;  // the same port unless another program took it
  ASSERT_TRUE(WaitUntil([&] { return ReplicaHasRun(during) == 1; }, kWait));
  ASSERT_TRUE(WaitUntil([&] { return Reads() == "replica"; }, kWait)) << Get("/healthz").second;
  EXPECT_TRUE(WebListsRun(during));
}

}  // namespace
}  // namespace fleetmark::testing
