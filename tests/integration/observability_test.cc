// The coordinator's GET /healthz and Prometheus GET /metrics, scraped over loopback from
// a real fleetmark-coordinator process (--http_address) after a real fleetmark-agent ran
// a job; the body is checked by Prometheus's own parser (`promtool check metrics`,
// Debian package prometheus) and its values against the database.
#include <httplib.h>

#include <fstream>
#include <map>
#include <memory>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"
#include "tests/integration/fleet_harness.h"

namespace fleetmark::testing {
namespace {

using ::testing::HasSubstr;

class ObservabilityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (TestPgUri().empty()) {
      if (PgRequired()) FAIL() << "FLEETMARK_TEST_REQUIRE_PG is set but FLEETMARK_TEST_PG_URI is not";
      GTEST_SKIP() << "FLEETMARK_TEST_PG_URI unset: no PostgreSQL";
    }
    dir_ = MakeTempDir("fleetmark-obs");
    ASSERT_FALSE(dir_.empty());
    auto database = TestDatabase::Create(TestPgUri());
    ASSERT_TRUE(database.ok()) << database.status();
    database_ = *std::move(database);
    CoordinatorConfig config;
    config.database_uri = database_->uri();
    config.extra_flags = {"--http_address=127.0.0.1:0"};
    auto coordinator = CoordinatorProcess::Start(dir_, config);
    ASSERT_TRUE(coordinator.ok()) << coordinator.status();
    coordinator_ = *std::move(coordinator);
    control_ = std::make_unique<ControlClient>(coordinator_->address(), config.admin_token);
    auto http_port = WebViewPort(*coordinator_);
    ASSERT_TRUE(http_port.ok()) << http_port.status();
    http_port_ = *http_port;
  }

  void TearDown() override {
    if (HasFailure() && coordinator_ != nullptr) {
      const std::string log = coordinator_->Log();
      std::cerr << "---- coordinator log (tail)\n" << log.substr(log.size() > 4000 ? log.size() - 4000 : 0) << "\n";
    }
    agent_.reset();
    coordinator_.reset();
    if (database_ != nullptr) {  // as it was, so that the drop can go ahead
      (void)Psql(database_->admin_uri(), absl::StrCat("ALTER DATABASE ", database_->name(), " ALLOW_CONNECTIONS true"));
    }
    database_.reset();
    RemoveTree(dir_);
  }

  // GET `path` from the coordinator's HTTP port: {status, body, content type}.
  struct Reply {
    int status = 0;
    std::string body, content_type;
  };
  Reply Get(const std::string& path) {
    httplib::Client client("127.0.0.1", http_port_);
    client.set_read_timeout(30, 0);  // a hang guard only
    auto res = client.Get(path.c_str());
    if (!res) return {};
    return {res->status, res->body, res->get_header_value("Content-Type")};
  }

  // Sample lines "name{labels} value" of an exposition body, keyed by "name{labels}".
  static std::map<std::string, double> Samples(const std::string& body) {
    std::map<std::string, double> samples;
    for (absl::string_view line : absl::StrSplit(body, '\n')) {
      if (line.empty() || line[0] == '#') continue;
      const size_t space = line.rfind(' ');
      double value = 0;
      if (space == absl::string_view::npos || !absl::SimpleAtod(line.substr(space + 1), &value)) {
        ADD_FAILURE() << "not a sample line: " << line;
        continue;
      }
      samples[std::string(line.substr(0, space))] = value;
    }
    return samples;
  }

  std::string dir_;
  int http_port_ = 0;
  std::unique_ptr<TestDatabase> database_;
  std::unique_ptr<CoordinatorProcess> coordinator_;
  std::unique_ptr<ControlClient> control_;
  std::unique_ptr<AgentProcess> agent_;
};

TEST_F(ObservabilityTest, MetricsAfterAJobPassPromtoolAndCountTheFleet) {
  AgentConfig agent;
  agent.name = "obs-agent";
  agent.token = coordinator_->config().enrollment_token;
  auto started = AgentProcess::Start(dir_, coordinator_->address(), agent);
  ASSERT_TRUE(started.ok()) << started.status();
  agent_ = *std::move(started);
  ASSERT_TRUE(control_->WaitOnline(1, absl::Seconds(60)).ok());
  const v1::Plan plan = ReducedS1Plan({"direct", "fixed_pool"}, {"arithmetic", "collections"}, 20, 3);
  auto run = control_->Submit(plan, "");
  ASSERT_TRUE(run.ok()) << run.status();
  auto ended = control_->WaitRunEnded(run->run_id(), absl::Minutes(5));
  ASSERT_TRUE(ended.ok()) << ended.status();
  ASSERT_EQ(ended->status(), "done") << ended->ShortDebugString();

  const Reply reply = Get("/metrics");
  ASSERT_EQ(reply.status, 200) << reply.body;
  EXPECT_THAT(reply.content_type, HasSubstr("text/plain; version=0.0.4"));
  // Prometheus's own parser and linter (naming, HELP, TYPE, _total, units).
  const std::string file = dir_ + "/metrics.txt";
  std::ofstream(file) << reply.body;
  absl::StatusOr<std::string> check = RunCommand({"sh", "-c", "promtool check metrics < '" + file + "' 2>&1"});
  ASSERT_TRUE(check.ok()) << "promtool check metrics: " << check.status() << "\n" << reply.body;
  EXPECT_EQ(*check, "") << reply.body;

  const std::map<std::string, double> samples = Samples(reply.body);
  const auto value = [&](const std::string& key) {
    auto it = samples.find(key);
    EXPECT_NE(it, samples.end()) << key << " missing in\n" << reply.body;
    return it == samples.end() ? -1.0 : it->second;
  };
  const int cases = CaseCount(plan);
  EXPECT_GE(value("fleetmark_results_ingested_total"), cases);
  EXPECT_EQ(value("fleetmark_agent_streams_open"), 1);
  EXPECT_GT(value("fleetmark_agent_streams_limit"), 1);  // the descriptor budget
  EXPECT_EQ(value("fleetmark_agent_streams_refused_total"), 0);
  EXPECT_EQ(value("fleetmark_agents{state=\"online\"}"), 1);
  EXPECT_EQ(value("fleetmark_agents{state=\"offline\"}"), 0);
  EXPECT_EQ(value("fleetmark_agents{state=\"removed\"}"), 0);
  EXPECT_EQ(value("fleetmark_jobs{state=\"done\"}"), 1);
  EXPECT_EQ(value("fleetmark_jobs{state=\"queued\"}"), 0);
  EXPECT_EQ(value("fleetmark_runs_in_flight"), 0);
  EXPECT_GE(value("fleetmark_ingest_commit_seconds_count"), 1);
  EXPECT_EQ(value("fleetmark_ingest_commit_seconds_bucket{le=\"+Inf\"}"),
            value("fleetmark_ingest_commit_seconds_count"));
  EXPECT_GE(value("fleetmark_ingest_batch_size_sum"), cases);
  EXPECT_EQ(value("fleetmark_dispatch_seconds_count"), 1);  // one job pushed
  EXPECT_GE(value("fleetmark_database_errors_total"), 0);
  // Results are counted once: the database holds exactly as many as were ingested.
  EXPECT_EQ(value("fleetmark_results_ingested_total"), *PsqlInt(database_->uri(), "SELECT count(*) FROM case_results"));
}

// `submit --wait` shows each agent's current case: the agent reports it with its
// progress, the coordinator holding its stream adds it to GetRun / WatchRun.
TEST_F(ObservabilityTest, RunningJobsCarryTheirAgentsCurrentCase) {
  AgentConfig agent;
  agent.name = "obs-agent";
  agent.token = coordinator_->config().enrollment_token;
  auto started = AgentProcess::Start(dir_, coordinator_->address(), agent);
  ASSERT_TRUE(started.ok()) << started.status();
  agent_ = *std::move(started);
  ASSERT_TRUE(control_->WaitOnline(1, absl::Seconds(60)).ok());
  // 8 cases taking seconds, in 2 rounds: the job is seen running between slices.
  const v1::Plan plan =
      ReducedS1Plan({"direct", "single_thread", "fixed_pool", "thread_per_task"}, {"storage", "mixed"}, 40, 10, 2);
  auto run = control_->Submit(plan, "");
  ASSERT_TRUE(run.ok()) << run.status();
  std::string current;
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto info = control_->GetRun(run->run_id());
        if (!info.ok() || info->jobs_size() != 1) return false;
        current = info->jobs(0).current_case_id();
        return info->jobs(0).status() == "running" && !current.empty();
      },
      absl::Minutes(3), absl::Milliseconds(50)));
  auto ended = control_->WaitRunEnded(run->run_id(), absl::Minutes(5));
  ASSERT_TRUE(ended.ok()) << ended.status();
  EXPECT_EQ(ended->status(), "done");
  EXPECT_EQ(ended->jobs(0).current_case_id(), "");  // only running jobs have one
  // It names one of the run's cases.
  EXPECT_EQ(*PsqlInt(database_->uri(), absl::StrCat("SELECT count(*) FROM case_results WHERE run_id = '", run->run_id(),
                                                    "' AND case_id = '", current, "'")),
            1)
      << current;
}

TEST_F(ObservabilityTest, HealthzIsOkThenNamesAMissingMigrationThenAnUnreachableDatabase) {
  Reply reply = Get("/healthz");
  ASSERT_EQ(reply.status, 200) << reply.body;
  nlohmann::json body = nlohmann::json::parse(reply.body);
  const int64_t newest = *PsqlInt(database_->uri(), "SELECT max(version) FROM schema_migrations");
  EXPECT_EQ(body["status"], "ok");
  EXPECT_EQ(body["schema_version"], newest);

  // A schema behind this coordinator's: the newest migration is not recorded.
  ASSERT_TRUE(Psql(database_->uri(), absl::StrCat("DELETE FROM schema_migrations WHERE version = ", newest)).ok());
  reply = Get("/healthz");
  EXPECT_EQ(reply.status, 503) << reply.body;
  body = nlohmann::json::parse(reply.body);
  EXPECT_EQ(body["status"], "unavailable");
  EXPECT_THAT(body["reason"].get<std::string>(),
              HasSubstr(absl::StrCat("schema is behind: migration(s) ", newest, " not applied")));

  // The database refuses connections (and the coordinator's are cut).
  ASSERT_TRUE(
      Psql(database_->admin_uri(), absl::StrCat("ALTER DATABASE ", database_->name(), " ALLOW_CONNECTIONS false"))
          .ok());
  ASSERT_TRUE(Psql(database_->admin_uri(),
                   absl::StrCat("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '",
                                database_->name(), "'"))
                  .ok());
  reply = Get("/healthz");
  EXPECT_EQ(reply.status, 503) << reply.body;
  body = nlohmann::json::parse(reply.body);
  EXPECT_EQ(body["status"], "unavailable");
  EXPECT_THAT(body["reason"].get<std::string>(), HasSubstr("database unreachable"));
  // /metrics still answers: the fleet gauges have no samples, the errors are counted.
  reply = Get("/metrics");
  ASSERT_EQ(reply.status, 200) << reply.body;
  const std::map<std::string, double> samples = Samples(reply.body);
  EXPECT_EQ(samples.count("fleetmark_runs_in_flight"), 0u) << reply.body;
  ASSERT_EQ(samples.count("fleetmark_database_errors_total"), 1u) << reply.body;
  EXPECT_GE(samples.at("fleetmark_database_errors_total"), 1);
}

}  // namespace
}  // namespace fleetmark::testing
