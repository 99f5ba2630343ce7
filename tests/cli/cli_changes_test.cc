// Confirmed changes end to end (issue 14, item 5): a real coordinator, a real agent and
// PostgreSQL. Nightly history is seeded through the coordinator's Store (the path agents'
// results take) as scheduled runs of a real plan; when a seeded nightly point starts a
// change, the coordinator submits a confirmation run of just the changed cases on that
// agent, which the real agent runs, and decides the change from it. The plan's cases are
// `storage` waits (10 tasks: 5.45 ms of sleeps in a row), so the real level is known:
// a history at 1 ms with a new point at 5.6 ms is confirmed, a 50 ms spike over a 5.6 ms
// history is not reproduced.
#include <httplib.h>

#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "coordinator/service/run_cases.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "tests/cli/cli_store_fixture.h"

namespace {

using namespace fleetmark_cli_test;  // NOLINT: the fixture of this test folder
using ::testing::HasSubstr;
using json = nlohmann::json;
namespace store = fleetmark::store;
namespace v1 = fleetmark::v1;

constexpr char kPlan[] = R"pb(name: "nightly-changes"
                              matrix {
                                strategies { name: "direct" }
                                strategies { name: "single_thread" }
                                strategies { name: "fixed_pool" threads: 2 }
                                workloads: [ "storage" ]
                                batch { tasks: 10 }
                              }
                              measurement { warmup_seconds: 0.01 max_repetitions: 5 max_seconds_per_case: 2 rounds: 1 }
)pb";

// A loopback HTTP receiver of the coordinator's webhook POSTs.
class WebhookReceiver {
 public:
  WebhookReceiver() {
    server_.Post("/hook", [this](const httplib::Request& req, httplib::Response& res) {
      absl::MutexLock lock(&mu_);
      bodies_.push_back(req.body);
      content_types_.push_back(req.get_header_value("Content-Type"));
      res.set_content("{}", "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~WebhookReceiver() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return absl::StrCat("http://127.0.0.1:", port_, "/hook"); }
  std::vector<std::string> bodies() {
    absl::MutexLock lock(&mu_);
    return bodies_;
  }
  std::vector<std::string> content_types() {
    absl::MutexLock lock(&mu_);
    return content_types_;
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  absl::Mutex mu_;
  std::vector<std::string> bodies_, content_types_;
};

class CliChangesTest : public CliStorePgTest {
 protected:
  void Configure(fleetmark::testing::CoordinatorConfig& config) override {
    config.extra_flags.push_back("--confirm_budget_per_agent_per_day=1");
    config.extra_flags.push_back("--alert_webhook_url=" + receiver_.url());
  }

  void SetUp() override {
    CliStoreTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(kPlan, &plan_));
    auto ids = fleetmark::service::SelectedCaseIds(plan_, false, "");
    ASSERT_TRUE(ids.ok()) << ids.status();
    case_ids_ = *ids;
    ASSERT_EQ(case_ids_.size(), 3u);
    ASSERT_EQ(case_ids_[0], "batch/storage/blocking/direct/any");
  }

  std::string AgentId(const std::string& name) {
    auto agents = store_->ListAgentSummaries();
    EXPECT_TRUE(agents.ok()) << agents.status();
    for (const store::AgentSummary& a : *agents) {
      if (a.name == name) return a.agent_id;
    }
    ADD_FAILURE() << "no agent " << name;
    return "";
  }

  // One nightly run (submitted by schedule:nightly) of `plan` on `agent_id`, its job
  // claimed and finished, with median medians_ns[i] for case i.
  void Night(const std::string& agent_id, const std::vector<double>& medians_ns, const v1::Plan& plan) {
    store::NewRun run;
    run.plan = plan;
    run.submitted_by = "schedule:nightly";
    run.selector = "all";
    run.agent_ids = {agent_id};
    run.case_ids = case_ids_;
    run.cases_total = static_cast<uint32_t>(case_ids_.size());
    auto created = store_->CreateRunAndClaim(run, {agent_id}, absl::Hours(1));
    ASSERT_TRUE(created.ok()) << created.status();
    ASSERT_EQ(created->claimed.size(), 1u);
    const store::ClaimedJob& job = created->claimed[0];
    std::vector<v1::CaseResult> results;
    for (size_t i = 0; i < medians_ns.size(); ++i) {
      v1::CaseResult r = BatchResult(next_id_++, job, "direct", medians_ns[i]);
      r.mutable_spec()->set_case_id(case_ids_[i]);
      r.mutable_spec()->set_workload("storage");
      results.push_back(r);
    }
    Insert(results, std::vector<std::string>(results.size(), agent_id));
    store::JobOutcome done;
    done.ok = true;
    ASSERT_TRUE(store_->FinishJob(job.assignment.job_id(), agent_id, done).ok());
  }
  void Nights(const std::string& agent_id, int n, const std::vector<double>& levels, const v1::Plan& plan) {
    for (int k = 0; k < n; ++k) {
      std::vector<double> jittered;
      for (double level : levels) jittered.push_back(level * (1 + 0.004 * ((k % 3) - 1)));
      ASSERT_NO_FATAL_FAILURE(Night(agent_id, jittered, plan));
    }
  }

  // `changes list --format json` until `done(changes)` holds (90 s at most).
  json WaitForChanges(const std::function<bool(const json&)>& done, const std::string& flags = "") {
    json changes = json::array();
    for (int i = 0; i < 450; ++i) {
      CliResult r = Fleet("changes list --format json" + flags);
      EXPECT_EQ(r.exit_code, 0) << r.err;
      if (r.exit_code != 0) return changes;
      json doc = json::parse(r.out);
      changes = doc.value("changes", json::array());
      if (done(changes)) return changes;
      absl::SleepFor(absl::Milliseconds(200));
    }
    ADD_FAILURE() << "changes not decided in time: " << changes.dump(2) << "\ncoordinator log:\n"
                  << coordinator_->Log();
    return changes;
  }
  static const json* ByCase(const json& changes, const std::string& case_id) {
    for (const json& c : changes) {
      if (c.value("case_id", "") == case_id) return &c;
    }
    return nullptr;
  }
  static bool AllDecided(const json& changes, size_t n) {
    if (changes.size() < n) return false;
    for (const json& c : changes) {
      if (c.value("state", "") == "suspected") return false;
    }
    return true;
  }

  WebhookReceiver receiver_;
  v1::Plan plan_;
  std::vector<std::string> case_ids_;
  int next_id_ = 1;
};

TEST_F(CliChangesTest, ConfirmedNotReproducedOverBudgetAndTheWebhook) {
  ASSERT_NO_FATAL_FAILURE(StartAgent("w1"));
  const std::string w1 = AgentId("w1");
  // Six quiet nights: direct at 1 ms (a level the device no longer has), single_thread
  // and fixed_pool at their real ~5.6 ms.
  ASSERT_NO_FATAL_FAILURE(Nights(w1, 6, {1e6, 5.6e6, 5.6e6}, plan_));
  // The seventh: direct now at its real level (a change), single_thread spikes to 50 ms.
  ASSERT_NO_FATAL_FAILURE(Night(w1, {5.6e6, 50e6, 5.6e6}, plan_));
  json changes = WaitForChanges([](const json& c) { return AllDecided(c, 2); });
  ASSERT_EQ(changes.size(), 2u) << changes.dump(2);
  const json* direct = ByCase(changes, case_ids_[0]);
  const json* single = ByCase(changes, case_ids_[1]);
  ASSERT_NE(direct, nullptr);
  ASSERT_NE(single, nullptr);
  EXPECT_EQ((*direct)["state"], "confirmed") << direct->dump(2) << coordinator_->Log();
  EXPECT_EQ((*single)["state"], "not_reproduced") << single->dump(2) << coordinator_->Log();
  EXPECT_NEAR((*direct)["old_level_ns"].get<double>(), 1e6, 1e4);
  EXPECT_DOUBLE_EQ((*direct)["new_level_ns"].get<double>(), 5.6e6);
  EXPECT_THAT((*direct)["reason"].get<std::string>(), HasSubstr("from the old level 1.00 ms"));
  // One confirmation run for both, of just those two cases, on w1, and it ran.
  const std::string confirmation = (*direct)["confirmation_run_id"];
  ASSERT_FALSE(confirmation.empty());
  EXPECT_EQ((*single)["confirmation_run_id"], confirmation);
  const double measured = (*direct)["confirmation_median_ns"].get<double>();
  EXPECT_GT(measured, 5e6);  // 5.45 ms of sleeps at least
  CliResult runs = Fleet("runs list");
  ASSERT_EQ(runs.exit_code, 0) << runs.err;
  EXPECT_THAT(runs.out, HasSubstr(absl::StrCat("confirmation of changes ", (*direct)["change_id"].get<std::string>(),
                                               ", ", (*single)["change_id"].get<std::string>())))
      << runs.out;
  CliResult shown = Fleet("export " + confirmation + " --format csv");
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_THAT(shown.out, HasSubstr(case_ids_[0]));
  EXPECT_THAT(shown.out, HasSubstr(case_ids_[1]));
  EXPECT_THAT(shown.out, ::testing::Not(HasSubstr(case_ids_[2])));

  // The webhook got the confirmed change (only that one), as JSON.
  std::vector<std::string> bodies;
  for (int i = 0; i < 100 && bodies.empty(); ++i) {
    bodies = receiver_.bodies();
    absl::SleepFor(absl::Milliseconds(100));
  }
  ASSERT_EQ(bodies.size(), 1u);
  EXPECT_EQ(receiver_.content_types()[0], "application/json");
  const json body = json::parse(bodies[0]);
  EXPECT_EQ(body["state"], "confirmed");
  EXPECT_EQ(body["agent"], "w1");
  EXPECT_EQ(body["case_id"], case_ids_[0]);
  EXPECT_EQ(body["unit"], "ns");
  EXPECT_NEAR(body["old_level_ns"].get<double>(), 1e6, 1e4);
  EXPECT_EQ(body["old_level"], "1.00 ms");
  EXPECT_EQ(body["new_level"], "5.60 ms");
  EXPECT_NEAR(body["ratio"].get<double>(), 5.6, 0.1);
  EXPECT_DOUBLE_EQ(body["confirmation_median_ns"].get<double>(), measured);
  EXPECT_EQ(body["confirmation_run_id"], confirmation);
  EXPECT_EQ(body["run_id"], (*direct)["run_id"]);
  EXPECT_EQ(body["links"]["confirmation_run"], "/runs/" + confirmation);
  EXPECT_THAT(body["links"]["history"].get<std::string>(), HasSubstr("/history?case=batch%2Fstorage"));

  // The table and the filters.
  CliResult table = Fleet("changes list");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("confirmed"));
  EXPECT_THAT(table.out, HasSubstr("not_reproduced"));
  EXPECT_THAT(table.out, HasSubstr("1.00 ms"));
  CliResult only = Fleet("changes list --state confirmed --format csv");
  ASSERT_EQ(only.exit_code, 0) << only.err;
  EXPECT_THAT(only.out, HasSubstr(case_ids_[0]));
  EXPECT_THAT(only.out, ::testing::Not(HasSubstr(case_ids_[1])));
  CliResult none = Fleet("changes list --agent w1 --state suspected");  // both changes are decided
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_EQ(none.out, "no changes\n");
  // A name no agent ever had is a mistake to say, not an empty list.
  CliResult nobody = Fleet("changes list --agent nobody");
  EXPECT_EQ(nobody.exit_code, 2) << nobody.err;
  EXPECT_THAT(nobody.err, HasSubstr("no agent named \"nobody\""));
  CliResult bad_state = Fleet("changes list --state broken");
  EXPECT_NE(bad_state.exit_code, 0);
  EXPECT_THAT(bad_state.err, HasSubstr("state: one of suspected, confirmed, not_reproduced, unconfirmed"));
  CliResult bad_since = Fleet("changes list --since yesterday");
  EXPECT_EQ(bad_since.exit_code, 2);
  EXPECT_THAT(bad_since.err, HasSubstr("--since: a duration back from now (24h, 90m, 7d) or a UTC date"));
  CliResult future = Fleet("changes list --since 2999-01-01");
  ASSERT_EQ(future.exit_code, 0) << future.err;
  EXPECT_EQ(future.out, "no changes\n");

  // An eighth night: fixed_pool jumps; w1 already had its one confirmation run today.
  ASSERT_NO_FATAL_FAILURE(Night(w1, {5.6e6, 5.6e6, 50e6}, plan_));
  changes = WaitForChanges([](const json& c) { return AllDecided(c, 3); });
  const json* pool = ByCase(changes, case_ids_[2]);
  ASSERT_NE(pool, nullptr) << changes.dump(2);
  EXPECT_EQ((*pool)["state"], "unconfirmed");
  EXPECT_EQ((*pool)["reason"], "over the confirmation budget (1 per agent per day)");
  EXPECT_EQ((*pool)["confirmation_run_id"], "");
  EXPECT_EQ(receiver_.bodies().size(), 1u);  // unconfirmed changes are not posted
  // /metrics counts the one POST.
}

// The paths that leave a change unconfirmed: its agent is offline, quarantined, or its
// confirmation run is deferred by a precondition that fails.
TEST_F(CliChangesTest, OfflineQuarantinedAndDeferredAreUnconfirmed) {
  ASSERT_NO_FATAL_FAILURE(StartAgent("w1"));
  const std::string w1 = AgentId("w1");
  v1::HostInfo host;
  host.set_arch("aarch64");
  const std::string gone = Register("gone", host);
  ASSERT_TRUE(store_->SetAgentOffline(gone, "s-gone").ok());
  const std::string sick = Register("sick", host);
  {
    pqxx::connection c(db_->uri());
    pqxx::work w(c);
    w.exec_params(
        "UPDATE agents SET health = 'quarantined', quarantine_reason = 'injected by the test', "
        "quarantined_at = now() WHERE agent_id = $1::uuid",
        sick);
    w.commit();
  }
  // w1's nightly plan has a gate no machine passes: its confirmation run is deferred.
  v1::Plan gated = plan_;
  gated.mutable_preconditions()->set_min_free_memory_mib(16777216);
  gated.mutable_preconditions()->set_max_checks(1);
  gated.mutable_preconditions()->set_cooldown_seconds(0);
  for (const auto& [agent, plan] :
       std::vector<std::pair<std::string, v1::Plan>>{{gone, plan_}, {sick, plan_}, {w1, gated}}) {
    ASSERT_NO_FATAL_FAILURE(Nights(agent, 6, {1e6, 5.6e6, 5.6e6}, plan));
    ASSERT_NO_FATAL_FAILURE(Night(agent, {5.6e6, 5.6e6, 5.6e6}, plan));
  }
  json changes = WaitForChanges([](const json& c) { return AllDecided(c, 3); });
  ASSERT_EQ(changes.size(), 3u) << changes.dump(2);
  std::map<std::string, json> by_agent;
  for (const json& c : changes) by_agent[c["agent_name"]] = c;
  EXPECT_EQ(by_agent["gone"]["state"], "unconfirmed");
  EXPECT_EQ(by_agent["gone"]["reason"], "agent gone is offline");
  EXPECT_EQ(by_agent["sick"]["state"], "unconfirmed");
  EXPECT_EQ(by_agent["sick"]["reason"], "agent sick is quarantined (injected by the test)");
  EXPECT_EQ(by_agent["w1"]["state"], "unconfirmed") << coordinator_->Log();
  EXPECT_THAT(by_agent["w1"]["reason"].get<std::string>(), HasSubstr("confirmation run deferred: "));
  EXPECT_THAT(by_agent["w1"]["reason"].get<std::string>(), HasSubstr("memory"));
  EXPECT_FALSE(by_agent["w1"]["confirmation_run_id"].get<std::string>().empty());
  CliResult only = Fleet("changes list --agent sick");
  ASSERT_EQ(only.exit_code, 0) << only.err;
  EXPECT_THAT(only.out, HasSubstr("quarantined (injected by the test)"));
  EXPECT_THAT(only.out, ::testing::Not(HasSubstr("gone")));
  EXPECT_TRUE(receiver_.bodies().empty());
}

}  // namespace
