// Dispatcher (coordinator/service/dispatcher.h) over the in-memory store
// (coordinator/store/memory_store.h) on a fake clock: no PostgreSQL, no gRPC stream, no
// sleeping (waits are on conditions, with generous hang guards only).
#include "coordinator/service/dispatcher.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "coordinator/store/memory_store.h"
#include "engine/common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace fleetmark::service {
namespace {

using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

constexpr absl::Duration kHangGuard = absl::Seconds(60);

// The in-memory store, recording the agents of each ClaimJobs call and failing claims
// on request (a database outage).
class ClaimRecordingStore : public store::MemoryStore {
 public:
  explicit ClaimRecordingStore(const Clock& clock) : MemoryStore(store::StoreOptions{}, clock) {}
  absl::StatusOr<std::vector<store::ClaimedJob>> ClaimJobs(const std::vector<std::string>& agent_ids,
                                                           absl::Duration lease) override {
    {
      absl::MutexLock lock(&mu_);
      calls_.push_back(agent_ids);
      if (!failure_.ok()) return failure_;
    }
    return MemoryStore::ClaimJobs(agent_ids, lease);
  }
  // Makes ClaimJobs fail with `status` (OK: succeed again).
  void FailClaims(absl::Status status) {
    absl::MutexLock lock(&mu_);
    failure_ = std::move(status);
  }
  // The agent ids of each ClaimJobs call, in call order.
  std::vector<std::vector<std::string>> claim_calls() const {
    absl::MutexLock lock(&mu_);
    return calls_;
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<std::vector<std::string>> calls_ ABSL_GUARDED_BY(mu_);
  absl::Status failure_ ABSL_GUARDED_BY(mu_);
};

class DispatcherTest : public ::testing::Test {
 protected:
  // A new agent enrolled in the store: its id.
  std::string Enroll(const std::string& name) {
    store::AgentRegistration reg;
    reg.name = name;
    reg.credential_sha256 = "hash-" + name;
    reg.session_id = "session-" + name;
    absl::StatusOr<std::string> id = store_.RegisterAgent(reg);
    EXPECT_TRUE(id.ok()) << id.status();
    return id.value_or("");
  }
  // A run of one queued job for `agent_id`: the job's id.
  std::string QueueJob(const std::string& agent_id) {
    store::NewRun run;
    run.plan.set_name("small");
    run.submitted_by = "test";
    run.agent_ids = {agent_id};
    run.cases_total = 1;
    absl::StatusOr<v1::RunInfo> created = store_.CreateRun(run);
    EXPECT_TRUE(created.ok()) << created.status();
    return created.ok() && created->jobs_size() == 1 ? created->jobs(0).job_id() : "";
  }
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
  // The job's status in the store.
  std::string StatusOf(const std::string& job_id) {
    absl::StatusOr<std::string> run_id = store_.ResolveRunId(job_id);
    if (!run_id.ok()) return run_id.status().ToString();
    absl::StatusOr<v1::RunInfo> run = store_.GetRun(*run_id);
    if (!run.ok()) return run.status().ToString();
    for (const v1::JobInfo& job : run->jobs()) {
      if (job.job_id() == job_id) return job.status();
    }
    return "no job " + job_id;
  }

  FakeClock clock_{absl::FromUnixSeconds(1'700'000'000)};
  ClaimRecordingStore store_{clock_};
  AgentRegistry registry_;
  Executor executor_{1};  // one thread: runs in posting order, so Drain waits for Wake's claim
  Dispatcher dispatcher_{store_, registry_, executor_, absl::Seconds(30)};
};

TEST_F(DispatcherTest, WakeClaimsForIdleConnectedAgentsAndMarksThemBusy) {
  const std::string a = Enroll("a"), b = Enroll("b"), c = Enroll("c");
  const std::string unknown = "00000000-0000-4000-8000-0000000000aa";  // connected nowhere
  auto idle = Connect(a);
  auto busy = Connect(b, "job-running");
  auto closing = Connect(c);
  closing->Close(grpc::Status::OK);
  const std::string job1 = QueueJob(a), job2 = QueueJob(a), job3 = QueueJob(b), job4 = QueueJob(c);

  dispatcher_.Wake({a, b, c, unknown});
  Drain();
  // Only the idle, open, connected agent is claimed for; it gets its oldest job.
  EXPECT_THAT(store_.claim_calls(), ElementsAre(ElementsAre(a)));
  EXPECT_EQ(RunningJob(idle), job1);
  EXPECT_EQ(RunningJob(busy), "job-running");
  EXPECT_EQ(RunningJob(closing), "");
  EXPECT_EQ(StatusOf(job1), store::kJobAssigned);
  for (const std::string& queued : {job2, job3, job4}) EXPECT_EQ(StatusOf(queued), store::kJobQueued);

  // Busy now: a second wake claims nothing for it.
  dispatcher_.Wake({a});
  Drain();
  EXPECT_EQ(store_.claim_calls().size(), 1u);
  EXPECT_EQ(RunningJob(idle), job1);
}

TEST_F(DispatcherTest, WakesWhileAClaimIsPendingAreCoalescedIntoOne) {
  const std::string agent_a = Enroll("a"), agent_b = Enroll("b");
  auto a = Connect(agent_a);
  auto b = Connect(agent_b);
  const std::string job_a = QueueJob(agent_a), job_b = QueueJob(agent_b);
  // Hold the executor so both wakes land before the claim runs.
  absl::Mutex gate_mu;
  bool open = false;
  executor_.Post([&] {
    absl::MutexLock lock(&gate_mu);
    gate_mu.AwaitWithTimeout(absl::Condition(&open), kHangGuard);
  });
  dispatcher_.Wake({agent_a});
  dispatcher_.Wake({agent_b});
  dispatcher_.Wake({agent_a});
  {
    absl::MutexLock lock(&gate_mu);
    open = true;
  }
  Drain();
  ASSERT_EQ(store_.claim_calls().size(), 1u);
  EXPECT_THAT(store_.claim_calls()[0], UnorderedElementsAre(agent_a, agent_b));
  EXPECT_EQ(RunningJob(a), job_a);
  EXPECT_EQ(RunningJob(b), job_b);
}

TEST_F(DispatcherTest, WakeAllIdleSkipsBusyAndUnwelcomedSessions) {
  const std::string a = Enroll("a"), b = Enroll("b"), x = Enroll("x");
  auto idle = Connect(a);
  Connect(b, "job-running");
  auto unwelcomed = std::make_shared<AgentSession>("session-x", "peer");
  registry_.Add(x, unwelcomed);  // agent_id not set yet: not idle
  const std::string job = QueueJob(a);
  QueueJob(x);
  dispatcher_.WakeAllIdle();
  Drain();
  EXPECT_THAT(store_.claim_calls(), ElementsAre(ElementsAre(a)));
  EXPECT_EQ(RunningJob(idle), job);
}

TEST_F(DispatcherTest, AFailedClaimLeavesAgentsIdleForTheNextSweep) {
  const std::string agent = Enroll("a");
  auto a = Connect(agent);
  const std::string job = QueueJob(agent);
  store_.FailClaims(absl::UnavailableError("database down"));
  dispatcher_.Wake({agent});
  Drain();
  EXPECT_EQ(RunningJob(a), "");
  EXPECT_EQ(StatusOf(job), store::kJobQueued);
  store_.FailClaims(absl::OkStatus());
  dispatcher_.WakeAllIdle();  // what the sweep does
  Drain();
  EXPECT_EQ(RunningJob(a), job);
  EXPECT_EQ(store_.claim_calls().size(), 2u);
}

// A claimed job's lease runs on the store's clock: while the dispatcher's agent holds
// it, it stays assigned; once the clock passes the dispatcher's lease (30 s) with no
// renewal, the expiry sweep re-queues it and the next wake claims it again (attempt 2).
TEST_F(DispatcherTest, AClaimedJobsLeaseRunsOnTheStoresClock) {
  const std::string agent = Enroll("a");
  auto a = Connect(agent);
  const std::string job = QueueJob(agent);
  dispatcher_.Wake({agent});
  Drain();
  ASSERT_EQ(RunningJob(a), job);
  clock_.Advance(absl::Seconds(29));
  EXPECT_TRUE(store_.ExpireLeases()->empty()) << "within the lease";
  clock_.Advance(absl::Seconds(2));
  auto expired = store_.ExpireLeases();
  ASSERT_TRUE(expired.ok()) << expired.status();
  ASSERT_EQ(expired->size(), 1u);
  EXPECT_FALSE((*expired)[0].failed);
  EXPECT_EQ(StatusOf(job), store::kJobQueued);
  a->UpdateState([](AgentSession::AgentState& s) { s.running_job.clear(); });  // the agent restarted
  dispatcher_.Wake({agent});
  Drain();
  EXPECT_EQ(RunningJob(a), job);
  EXPECT_EQ(StatusOf(job), store::kJobAssigned);
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
