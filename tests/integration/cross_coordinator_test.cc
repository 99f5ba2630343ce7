// Pushes across coordinators (issue 17, item 3): three real fleetmark-coordinator
// processes on one test database, real agents connected to coordinator B, every command
// given to coordinator A. B's sweep interval is 1 minute (the longest allowed) and, where
// revocation is checked, its liveness flush (heartbeat interval) 30 s, so what reaches
// B's agents within seconds can only have come through PostgreSQL LISTEN/NOTIFY.
#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/fleet_harness.h"

namespace fleetmark::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// What an assertion may wait for a push: far below B's sweep (60 s) and flush (30 s).
constexpr absl::Duration kPushDeadline = absl::Seconds(12);
// The latest a push may be asked for after B's last sweep or flush for the check to
// prove anything (a push asked for later could be the next sweep's or flush's work).
constexpr absl::Duration kProofWindow = absl::Seconds(25);

class CrossCoordinatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (TestPgUri().empty()) {
      if (PgRequired()) FAIL() << "FLEETMARK_TEST_REQUIRE_PG is set but FLEETMARK_TEST_PG_URI is not";
      GTEST_SKIP() << "FLEETMARK_TEST_PG_URI unset: no PostgreSQL for the fleet tests";
    }
    dir_ = MakeTempDir("fleetmark-xc");
    ASSERT_FALSE(dir_.empty());
    auto database = TestDatabase::Create(TestPgUri());
    ASSERT_TRUE(database.ok()) << database.status();
    database_ = *std::move(database);
  }

  void TearDown() override {
    if (HasFailure()) {
      for (const auto& [name, coordinator] : coordinators_) {
        std::cerr << "---- coordinator " << name << " log (tail)\n" << Tail(coordinator->Log()) << "\n";
      }
      for (auto& agent : agents_) std::cerr << "---- agent " << agent->name() << " log (tail)\n" << Tail(agent->Log());
    }
    agents_.clear();
    coordinators_.clear();
    database_.reset();
    RemoveTree(dir_);
  }

  static std::string Tail(const std::string& log) { return log.size() > 4000 ? log.substr(log.size() - 4000) : log; }

  // A (commands), B (agents; slow sweep and, with `slow_flush`, slow liveness flush) and
  // C (a third peer) on the test database.
  void StartCoordinators(bool slow_flush) {
    for (const std::string name : {"A", "B", "C"}) {
      CoordinatorConfig config;
      config.database_uri = database_->uri();
      config.coordinator_id = name;
      if (name == "B") {
        config.sweep_interval = absl::Minutes(1);
        if (slow_flush) {
          config.heartbeat_interval = absl::Seconds(30);
          config.job_lease = absl::Minutes(1);
        }
      }
      const std::string dir = absl::StrCat(dir_, "/", name);
      std::filesystem::create_directories(dir);
      auto started = CoordinatorProcess::Start(dir, config);
      ASSERT_TRUE(started.ok()) << started.status();
      coordinators_.emplace_back(name, *std::move(started));
      if (name == "B") b_started_ = absl::Now();
    }
    a_ = std::make_unique<ControlClient>(coordinator("A").address(), coordinator("A").config().admin_token);
    b_ = std::make_unique<ControlClient>(coordinator("B").address(), coordinator("B").config().admin_token);
    ASSERT_TRUE(WaitUntil([&] { return ListenerPid("B") > 0; }, absl::Seconds(30))) << "B's listener never LISTENed";
  }

  CoordinatorProcess& coordinator(const std::string& name) {
    for (auto& [n, c] : coordinators_) {
      if (n == name) return *c;
    }
    ADD_FAILURE() << "no coordinator " << name;
    return *coordinators_.front().second;
  }

  AgentProcess* StartAgentOnB(const std::string& name, const std::string& token = "",
                              const std::string& binary = FLEETMARK_AGENT_BIN) {
    AgentConfig config;
    config.name = name;
    config.binary = binary;
    config.token = token.empty() ? coordinator("B").config().enrollment_token : token;
    auto agent = AgentProcess::Start(dir_, coordinator("B").address(), config);
    EXPECT_TRUE(agent.ok()) << agent.status();
    if (!agent.ok()) return nullptr;
    agents_.push_back(*std::move(agent));
    return agents_.back().get();
  }

  std::string Sql(const std::string& query) { return Psql(database_->uri(), query).value_or("<error>"); }

  // The backend pid of coordinator `name`'s LISTEN connection once it has LISTENed (its
  // last statement), else 0.
  int64_t ListenerPid(const std::string& name) {
    return PsqlInt(database_->uri(),
                   absl::StrCat("SELECT coalesce(max(pid), 0) FROM pg_stat_activity WHERE application_name = "
                                "'fleetmark-coordinator ",
                                name, " (listener)' AND query LIKE 'LISTEN%'"))
        .value_or(0);
  }

  // Submits a tiny run on A for agent `agent`; returns the time from the submit to the
  // job leaving 'queued', after checking that B claimed it (attempt 1).
  absl::Duration SubmitOnAUntilBClaims(const std::string& agent, const v1::Plan& plan, std::string* run_id) {
    const absl::Time t0 = absl::Now();
    auto run = a_->Submit(plan, "name=" + agent);
    EXPECT_TRUE(run.ok()) << run.status();
    if (!run.ok()) return absl::InfiniteDuration();
    *run_id = run->run_id();
    const std::string where = absl::StrCat(" FROM jobs WHERE run_id = '", run->run_id(), "'");
    const bool claimed = WaitUntil(
        [&] {
          const std::string status = Sql("SELECT status" + where);
          return status == "assigned" || status == "running" || status == "done";
        },
        kPushDeadline, absl::Milliseconds(20));
    const absl::Duration took = absl::Now() - t0;
    EXPECT_TRUE(claimed) << "the job stayed queued for " << kPushDeadline;
    EXPECT_EQ(Sql("SELECT coordinator_id || ' ' || attempts" + where), "B 1");
    return took;
  }

  std::string dir_;
  std::unique_ptr<TestDatabase> database_;
  std::vector<std::pair<std::string, std::unique_ptr<CoordinatorProcess>>> coordinators_;
  std::unique_ptr<ControlClient> a_, b_;
  std::vector<std::unique_ptr<AgentProcess>> agents_;
  absl::Time b_started_;
};

v1::Plan TinyPlan() { return ReducedS1Plan({"direct"}, {"arithmetic"}, 10, 2); }

TEST_F(CrossCoordinatorTest, RunSubmittedOnAIsAssignedToBsAgentAtOnceAlsoAfterBsListenerWasKilled) {
  ASSERT_NO_FATAL_FAILURE(StartCoordinators(/*slow_flush=*/false));
  AgentProcess* agent = StartAgentOnB("b-box");
  ASSERT_NE(agent, nullptr);
  ASSERT_TRUE(a_->WaitOnline(1, absl::Seconds(60)).ok()) << agent->Log();
  // B swept at its start and sweeps again a minute later.
  ASSERT_LT(absl::Now() - b_started_, kProofWindow) << "set-up too slow for the check to prove the push";
  std::string run_id;
  const absl::Duration first = SubmitOnAUntilBClaims("b-box", TinyPlan(), &run_id);
  EXPECT_LT(first, kPushDeadline);
  auto ended = a_->WaitRunEnded(run_id, absl::Seconds(60));
  ASSERT_TRUE(ended.ok()) << ended.status();
  EXPECT_EQ(ended->status(), "done");

  // B's LISTEN connection is killed; it reconnects (and sweeps once), and pushes arrive again.
  const int64_t old_pid = ListenerPid("B");
  ASSERT_GT(old_pid, 0);
  ASSERT_EQ(Sql(absl::StrCat("SELECT pg_terminate_backend(", old_pid, ")")), "t");
  ASSERT_TRUE(WaitUntil(
      [&] {
        const int64_t pid = ListenerPid("B");
        return pid > 0 && pid != old_pid;
      },
      absl::Seconds(30)))
      << "B's listener did not LISTEN again";
  const absl::Time relistened = absl::Now();
  EXPECT_TRUE(
      WaitUntil([&] { return absl::StrContains(coordinator("B").Log(), "notification listener: listening again"); },
                absl::Seconds(10)));
  absl::SleepFor(absl::Seconds(1));  // past the sweep the reconnect asked for
  const absl::Duration second = SubmitOnAUntilBClaims("b-box", TinyPlan(), &run_id);
  EXPECT_LT(second, kPushDeadline);
  EXPECT_LT(absl::Now() - relistened, kProofWindow);
  ended = a_->WaitRunEnded(run_id, absl::Seconds(60));
  ASSERT_TRUE(ended.ok()) << ended.status();
  EXPECT_EQ(ended->status(), "done");
}

TEST_F(CrossCoordinatorTest, RunCancelledOnAStopsTheJobOnBsAgent) {
  ASSERT_NO_FATAL_FAILURE(StartCoordinators(/*slow_flush=*/false));
  AgentProcess* agent = StartAgentOnB("b-hangs", "", FLEETMARK_HANG_AGENT_BIN);
  ASSERT_NE(agent, nullptr);
  ASSERT_TRUE(a_->WaitOnline(1, absl::Seconds(60)).ok()) << agent->Log();
  auto hung_plan =
      PlanFromText(R"pb(name: "hung"
                        matrix {
                          strategies { name: "direct" label: "test_hang" }
                          workloads: "arithmetic"
                          batch { tasks: 10 }
                        }
                        measurement { warmup_seconds: 0 min_repetitions: 5 max_repetitions: 5 rounds: 1 })pb");
  ASSERT_TRUE(hung_plan.ok()) << hung_plan.status();
  std::string run_id;
  SubmitOnAUntilBClaims("b-hangs", *hung_plan, &run_id);
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto info = a_->GetRun(run_id);
        return info.ok() && info->jobs(0).status() == "running";
      },
      absl::Seconds(30)));
  auto run = a_->GetRun(run_id);
  ASSERT_TRUE(run.ok());
  const std::string job_id = run->jobs(0).job_id();
  absl::SleepFor(absl::Seconds(1));  // hung in its repetition
  const absl::Time cancelled_at = absl::Now();
  ASSERT_TRUE(a_->CancelRun(run_id).ok());
  // B's sweep (the only other path that tells B's agent) is a minute apart; the case's
  // watchdog is 3 x 60 s.
  EXPECT_TRUE(WaitUntil([&] { return absl::StrContains(agent->Log(), absl::StrCat("job ", job_id, " cancelled")); },
                        kPushDeadline))
      << agent->Log();
  EXPECT_LT(absl::Now() - cancelled_at, kPushDeadline);
  EXPECT_TRUE(agent->process()->Running());
  auto after = a_->GetRun(run_id);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->status(), "cancelled");
}

TEST_F(CrossCoordinatorTest, TokenRevokedAndAgentRemovedOnAEndTheirStreamsOnB) {
  constexpr int kExitRefused = 3;
  ASSERT_NO_FATAL_FAILURE(StartCoordinators(/*slow_flush=*/true));
  auto token = a_->CreateToken("revoked through A");
  ASSERT_TRUE(token.ok()) << token.status();
  AgentProcess* revoked = StartAgentOnB("b-revoked", token->token());
  AgentProcess* removed = StartAgentOnB("b-removed");
  ASSERT_NE(revoked, nullptr);
  ASSERT_NE(removed, nullptr);
  // B's own view (its online window is 3 x 30 s + 5 s).
  ASSERT_TRUE(b_->WaitOnline(2, absl::Seconds(60)).ok()) << revoked->Log() << removed->Log();
  // B flushed (and checked revocations) at its start; its next flush is 30 s later.
  ASSERT_LT(absl::Now() - b_started_, kProofWindow - absl::Seconds(10))
      << "set-up too slow for the check to prove the push";

  ASSERT_TRUE(a_->RevokeToken(token->token_id()).ok());
  auto exit = revoked->process()->Wait(kPushDeadline);
  ASSERT_TRUE(exit.ok()) << "B's agent kept running after its token was revoked on A:\n" << revoked->Log();
  EXPECT_TRUE(exit->exited);
  EXPECT_EQ(exit->exit_code, kExitRefused) << revoked->Log();
  EXPECT_THAT(revoked->Log(), HasSubstr("enrollment token " + token->token_id() + " revoked"));

  ASSERT_TRUE(a_->RemoveAgent("b-removed").ok());
  EXPECT_TRUE(
      WaitUntil([&] { return absl::StrContains(removed->Log(), "agent removed by an operator"); }, kPushDeadline))
      << removed->Log();
  EXPECT_LT(absl::Now() - b_started_, absl::Seconds(30)) << "B's liveness flush may have done it";
}

// Issue 32, item 2: a second process given a copy of an agent's credential file (no
// token) was welcomed as that agent on another coordinator, took its running job as
// attempt 2 (the job ended with more rows than cases), marked the first offline while
// it was still connected, and two copies on one coordinator replaced each other every
// 0.5 s. One identity has one live session fleet-wide: the copies are refused while the
// first process's session lives, they back off, and the first keeps its job and stays
// online.
TEST_F(CrossCoordinatorTest, ACopiedCredentialIsRefusedOnEveryCoordinatorWhileTheAgentRunsItsJob) {
  ASSERT_NO_FATAL_FAILURE(StartCoordinators(/*slow_flush=*/false));
  AgentProcess* original = StartAgentOnB("a1");
  ASSERT_NE(original, nullptr);
  ASSERT_TRUE(a_->WaitOnline(1, absl::Seconds(60)).ok()) << original->Log();
  // 8 cases of several seconds in all: the job runs while the copies try.
  const v1::Plan plan =
      ReducedS1Plan({"direct", "single_thread", "fixed_pool", "thread_per_task"}, {"storage", "mixed"}, 40, 10, 2);
  std::string run_id;
  SubmitOnAUntilBClaims("a1", plan, &run_id);
  const std::string job = absl::StrCat(" FROM jobs WHERE run_id = '", run_id, "'");
  ASSERT_TRUE(WaitUntil([&] { return Sql("SELECT status" + job) == "running"; }, absl::Seconds(30)));

  // Two copies of a1's credential file (spool dirs of their own, no token): one on
  // coordinator A, one on B, where a1 is connected.
  std::vector<AgentProcess*> copies;
  const absl::Time copies_started = absl::Now();
  for (const std::string on : {"A", "B"}) {
    auto copy = AgentProcess::StartWithCopiedCredential(absl::StrCat(dir_, "/copy-on-", on), coordinator(on).address(),
                                                        *original, {"--reconnect_max_delay=8s"});
    ASSERT_TRUE(copy.ok()) << copy.status();
    agents_.push_back(*std::move(copy));
    copies.push_back(agents_.back().get());
  }
  for (AgentProcess* copy : copies) {
    EXPECT_TRUE(WaitUntil([&] { return absl::StrContains(copy->Log(), "refused by the coordinator: identity in use"); },
                          absl::Seconds(20)))
        << copy->Log();
  }
  // The first agent is online and selectable on every coordinator while the copies try.
  for (ControlClient* client : {a_.get(), b_.get()}) {
    auto agents = client->ListAgents("name=a1");
    ASSERT_TRUE(agents.ok()) << agents.status();
    ASSERT_EQ(agents->size(), 1u);
    EXPECT_EQ((*agents)[0].state(), "online");
  }
  const absl::Time watch_from = absl::Now();
  auto ended = a_->WaitRunEnded(run_id, absl::Seconds(240));
  ASSERT_TRUE(ended.ok()) << ended.status();
  EXPECT_EQ(ended->status(), "done");
  // Exactly one process ran the job, once: one row per case, one attempt.
  EXPECT_EQ(Sql(absl::StrCat("SELECT count(*) FROM case_results WHERE run_id = '", run_id, "'")),
            std::to_string(CaseCount(plan)));
  EXPECT_EQ(Sql("SELECT attempts" + job), "1");
  // Keep watching the copies for at least 15 s: they back off instead of spinning (with
  // an 8 s cap and full jitter, about one try per 4 s once the delay has grown; the
  // replacement loop was two per second).
  absl::SleepFor(std::max(absl::ZeroDuration(), absl::Seconds(15) - (absl::Now() - watch_from)));
  const int64_t lifetime_s = absl::ToInt64Seconds(absl::Now() - copies_started);
  for (AgentProcess* copy : copies) {
    const std::string log = copy->Log();
    EXPECT_EQ(Occurrences(log, "welcomed as agent"), 0) << log;
    EXPECT_LE(Occurrences(log, "refused by the coordinator: identity in use"), lifetime_s / 2 + 10) << log;
    EXPECT_TRUE(copy->process()->Running()) << log;  // it waits for the identity, it does not give up
  }
  // The first was never replaced: welcomed once, never told to stop, still online.
  EXPECT_EQ(Occurrences(original->Log(), "welcomed as agent"), 1) << original->Log();
  EXPECT_THAT(original->Log(), Not(HasSubstr("identity in use")));
  auto agents = a_->ListAgents("name=a1");
  ASSERT_TRUE(agents.ok()) << agents.status();
  ASSERT_EQ(agents->size(), 1u);
  EXPECT_EQ((*agents)[0].state(), "online");

  // Once the first process is gone, a copy gets the identity (after its stream's end).
  original->Kill9();
  EXPECT_TRUE(WaitUntil([&] { return Occurrences(copies[0]->Log() + copies[1]->Log(), "welcomed as agent") == 1; },
                        absl::Seconds(60)))
      << copies[0]->Log() << copies[1]->Log();
}

}  // namespace
}  // namespace fleetmark::testing
