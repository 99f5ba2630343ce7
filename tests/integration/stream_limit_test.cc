// The coordinator's descriptor budget (coordinator/service/stream_budget.h) with a real
// fleetmark-coordinator under `prlimit --nofile=256` on the in-memory store (its
// reserve still counts --db_pool_size connections, as on PostgreSQL): more
// simulated agents (tests/bench/sim_agent.h, each its own stream and TCP connection)
// than the budget connect; those over it get the retryable Refusal naming the limit,
// the held ones stay connected through heartbeats, no accept fails; a real
// fleetmark-agent refused meanwhile backs off and connects once a slot frees.
#include <memory>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "tests/bench/sim_agent.h"
#include "tests/integration/fleet_harness.h"

namespace fleetmark::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr absl::Duration kWait = absl::Seconds(90);  // hang guard of each wait
constexpr int kOverBudget = 40;

class StreamLimitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir("fleetmark-stream-limit");
    ASSERT_FALSE(dir_.empty());
    CoordinatorConfig config;
    config.memory_store = true;  // the budget is the coordinator's, whatever its store
    config.heartbeat_interval = absl::Seconds(1);
    config.command_prefix = {"/usr/bin/prlimit", "--nofile=256", "--"};
    auto coordinator = CoordinatorProcess::Start(dir_, config);
    ASSERT_TRUE(coordinator.ok()) << coordinator.status();
    coordinator_ = *std::move(coordinator);
    control_ = std::make_unique<ControlClient>(coordinator_->address(), config.admin_token);
  }

  void TearDown() override {
    if (HasFailure() && coordinator_ != nullptr) {
      const std::string log = coordinator_->Log();
      std::cerr << "---- coordinator log (tail)\n" << log.substr(log.size() > 4000 ? log.size() - 4000 : 0) << "\n";
      if (agent_ != nullptr) std::cerr << "---- agent log\n" << agent_->Log() << "\n";
    }
    agent_.reset();
    fleet_.reset();
    coordinator_.reset();
    RemoveTree(dir_);
  }

  // S of the start line "holding up to S agent streams (RLIMIT_NOFILE 256)"; 0 if absent.
  int LoggedBudget() {
    const std::string log = coordinator_->Log();
    const std::string prefix = "holding up to ";
    const size_t at = log.find(prefix);
    if (at == std::string::npos) return 0;
    const size_t begin = at + prefix.size();
    int budget = 0;
    if (!absl::SimpleAtoi(log.substr(begin, log.find(' ', begin) - begin), &budget)) return 0;
    EXPECT_THAT(log.substr(at, 80), HasSubstr("(RLIMIT_NOFILE 256)"));
    return budget;
  }

  std::string dir_;
  std::unique_ptr<CoordinatorProcess> coordinator_;
  std::unique_ptr<ControlClient> control_;
  std::unique_ptr<bench::SimFleet> fleet_;
  std::unique_ptr<AgentProcess> agent_;
};

TEST_F(StreamLimitTest, StreamsOverTheDescriptorBudgetAreRefusedAndTheHeldOnesStay) {
  const int budget = LoggedBudget();
  ASSERT_GT(budget, 0) << coordinator_->Log();
  ASSERT_LT(budget, 256);
  fleet_ = std::make_unique<bench::SimFleet>(absl::StrCat("ipv4:", coordinator_->address()),
                                             coordinator_->config().enrollment_token);
  fleet_->StartHeartbeats(absl::Seconds(1));
  fleet_->Add(budget, "held", {{"fleet", "sim"}});
  ASSERT_TRUE(WaitUntil([&] { return fleet_->welcomed() == static_cast<size_t>(budget); }, kWait))
      << fleet_->welcomed() << " of " << budget << " welcomed; refusals " << fleet_->refusals.load() << ": "
      << fleet_->first_refusal();
  fleet_->Add(kOverBudget, "over", {{"fleet", "sim"}});
  ASSERT_TRUE(WaitUntil([&] { return fleet_->refusals.load() == kOverBudget; }, kWait))
      << "refusals " << fleet_->refusals.load();
  EXPECT_EQ(fleet_->first_refusal(), absl::StrCat("coordinator at its stream limit ", budget, " (RLIMIT_NOFILE 256)"));
  for (size_t i = budget; i < fleet_->size(); ++i) {
    ASSERT_TRUE(WaitUntil([&] { return fleet_->agent(i)->done(); }, kWait));
    EXPECT_EQ(fleet_->agent(i)->final_status().error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
    EXPECT_FALSE(fleet_->agent(i)->welcomed());
  }

  // The held streams stay through several heartbeat intervals (a coordinator ends
  // streams silent for 3 intervals + 5 s, so 10 s shows they are served).
  absl::SleepFor(absl::Seconds(10));
  EXPECT_EQ(fleet_->open_streams(), static_cast<size_t>(budget));
  auto online = control_->ListAgents("label:fleet=sim");
  ASSERT_TRUE(online.ok()) << online.status();
  size_t listed_online = 0;
  for (const v1::AgentInfo& agent : *online) listed_online += agent.state() == "online";
  EXPECT_EQ(listed_online, static_cast<size_t>(budget));
  EXPECT_THAT(coordinator_->Log(), Not(HasSubstr("Too many open files")));

  // A real agent at the limit is refused, backs off (the harness gives it 200ms doubling
  // to 2s) and retries; a freed slot takes it.
  AgentConfig agent;
  agent.name = "real-agent";
  agent.token = coordinator_->config().enrollment_token;
  auto started = AgentProcess::Start(dir_, coordinator_->address(), agent);
  ASSERT_TRUE(started.ok()) << started.status();
  agent_ = *std::move(started);
  ASSERT_TRUE(WaitUntil([&] { return absl::StrContains(agent_->Log(), "at its stream limit"); }, kWait))
      << agent_->Log();
  EXPECT_TRUE(agent_->process()->Running());  // retryable: the agent does not exit
  fleet_->agent(0)->Stop();
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto agents = control_->ListAgents("name=real-agent");
        return agents.ok() && agents->size() == 1 && (*agents)[0].state() == "online";
      },
      kWait))
      << agent_->Log();
  // Online in the store comes first (the registration commits before the Welcome is
  // sent, after one more revocation check): wait for the agent to read its Welcome.
  EXPECT_TRUE(WaitUntil([&] { return absl::StrContains(agent_->Log(), "welcomed as agent"); }, kWait)) << agent_->Log();
  EXPECT_EQ(fleet_->open_streams(), static_cast<size_t>(budget - 1));
  EXPECT_THAT(coordinator_->Log(), Not(HasSubstr("Too many open files")));
}

}  // namespace
}  // namespace fleetmark::testing
