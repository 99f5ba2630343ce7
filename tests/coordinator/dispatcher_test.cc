// Dispatcher (coordinator/service/dispatcher.h) over the in-memory store: no
// PostgreSQL, no gRPC stream, no sleeping (waits are on conditions, with generous
// hang guards only).
#include "coordinator/service/dispatcher.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/coordinator/memory_store.h"

namespace fleetmark::service {
namespace {

using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

constexpr absl::Duration kHangGuard = absl::Seconds(60);

class DispatcherTest : public ::testing::Test {
 protected:
  // A welcomed agent's session (no stream: what it is sent is dropped; its state shows
  // the assignment).
  std::shared_ptr<AgentSession> Connect(const std::string& agent_id, const std::string& running_job = "") {
    auto session = std::make_shared<AgentSession>("session-" + agent_id, "peer");
    session->UpdateState([&](AgentSession::AgentState& s) {
      s.agent_id = agent_id;
      s.running_job = running_job;
    });
    registry_.Add(agent_id, session);
    return session;
  }
  // Waits (hang guard only) until the executor ran everything posted so far.
  void Drain() {
    absl::Mutex mu;
    bool done = false;
    executor_.Post([&] {
      absl::MutexLock lock(&mu);
      done = true;
    });
    absl::MutexLock lock(&mu);
    ASSERT_TRUE(mu.AwaitWithTimeout(absl::Condition(&done), kHangGuard));
  }
  std::string RunningJob(const std::shared_ptr<AgentSession>& session) { return session->state().running_job; }

  store::MemoryStore store_;
  AgentRegistry registry_;
  Executor executor_{1};  // one thread: runs in posting order, so Drain waits for Wake's claim
  Dispatcher dispatcher_{store_, registry_, executor_, absl::Seconds(30)};
};

TEST_F(DispatcherTest, WakeClaimsForIdleConnectedAgentsAndMarksThemBusy) {
  auto idle = Connect("agent-a");
  auto busy = Connect("agent-b", "job-running");
  auto closing = Connect("agent-c");
  closing->Close(grpc::Status::OK);
  store_.QueueJob("agent-a", "job-1");
  store_.QueueJob("agent-a", "job-2");
  store_.QueueJob("agent-b", "job-3");
  store_.QueueJob("agent-c", "job-4");

  dispatcher_.Wake({"agent-a", "agent-b", "agent-c", "agent-unknown"});
  Drain();
  // Only the idle, open, connected agent is claimed for; it gets its oldest job.
  EXPECT_THAT(store_.claim_calls(), ElementsAre(ElementsAre("agent-a")));
  EXPECT_EQ(RunningJob(idle), "job-1");
  EXPECT_EQ(RunningJob(busy), "job-running");
  EXPECT_EQ(RunningJob(closing), "");

  // Busy now: a second wake claims nothing for it.
  dispatcher_.Wake({"agent-a"});
  Drain();
  EXPECT_EQ(store_.claim_calls().size(), 1u);
  EXPECT_EQ(RunningJob(idle), "job-1");
}

TEST_F(DispatcherTest, WakesWhileAClaimIsPendingAreCoalescedIntoOne) {
  auto a = Connect("agent-a");
  auto b = Connect("agent-b");
  store_.QueueJob("agent-a", "job-a");
  store_.QueueJob("agent-b", "job-b");
  // Hold the executor so both wakes land before the claim runs.
  absl::Mutex gate_mu;
  bool open = false;
  executor_.Post([&] {
    absl::MutexLock lock(&gate_mu);
    gate_mu.AwaitWithTimeout(absl::Condition(&open), kHangGuard);
  });
  dispatcher_.Wake({"agent-a"});
  dispatcher_.Wake({"agent-b"});
  dispatcher_.Wake({"agent-a"});
  {
    absl::MutexLock lock(&gate_mu);
    open = true;
  }
  Drain();
  ASSERT_EQ(store_.claim_calls().size(), 1u);
  EXPECT_THAT(store_.claim_calls()[0], UnorderedElementsAre("agent-a", "agent-b"));
  EXPECT_EQ(RunningJob(a), "job-a");
  EXPECT_EQ(RunningJob(b), "job-b");
}

TEST_F(DispatcherTest, WakeAllIdleSkipsBusyAndUnwelcomedSessions) {
  auto idle = Connect("agent-a");
  Connect("agent-b", "job-running");
  auto unwelcomed = std::make_shared<AgentSession>("session-x", "peer");
  registry_.Add("agent-x", unwelcomed);  // agent_id not set yet: not idle
  store_.QueueJob("agent-a", "job-1");
  dispatcher_.WakeAllIdle();
  Drain();
  EXPECT_THAT(store_.claim_calls(), ElementsAre(ElementsAre("agent-a")));
  EXPECT_EQ(RunningJob(idle), "job-1");
}

TEST_F(DispatcherTest, AFailedClaimLeavesAgentsIdleForTheNextSweep) {
  auto a = Connect("agent-a");
  store_.QueueJob("agent-a", "job-1");
  store_.FailClaims(absl::UnavailableError("database down"));
  dispatcher_.Wake({"agent-a"});
  Drain();
  EXPECT_EQ(RunningJob(a), "");
  store_.FailClaims(absl::OkStatus());
  dispatcher_.WakeAllIdle();  // what the sweep does
  Drain();
  EXPECT_EQ(RunningJob(a), "job-1");
  EXPECT_EQ(store_.claim_calls().size(), 2u);
}

TEST_F(DispatcherTest, DeliverMarksAgentsBusyAndSkipsVanishedOnes) {
  auto a = Connect("agent-a");
  std::vector<store::ClaimedJob> jobs(2);
  jobs[0].agent_id = "agent-a";
  jobs[0].assignment.set_job_id("job-a");
  jobs[1].agent_id = "agent-gone";
  jobs[1].assignment.set_job_id("job-gone");
  dispatcher_.Deliver(std::move(jobs));
  EXPECT_EQ(RunningJob(a), "job-a");  // before Deliver returns
  EXPECT_THAT(dispatcher_.IdleLocal({"agent-a", "agent-gone"}), ElementsAre());
}

}  // namespace
}  // namespace fleetmark::service
