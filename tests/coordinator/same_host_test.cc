// Agents on one host (issue 31, item 5): the same-host rule (unit) and the one-job-per-
// host claims and listing of every store (store_conformance.h: PostgreSQL, with
// FLEETMARK_TEST_PG_URI, and memory).
#include "coordinator/scheduler/same_host.h"

#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "coordinator/store/store.h"
#include "tests/coordinator/store_backends.h"
#include "tests/coordinator/store_conformance.h"
#include "tests/coordinator/store_fixtures.h"

namespace fleetmark::store {
namespace {

using scheduler::HostIdentity;

constexpr char kMachine[] = "0f1e2d3c4b5a69788796a5b4c3d2e1f0";
constexpr char kBoot[] = "6c5f1f3e-8a0d-4c1b-9a3e-2f4b5c6d7e8f";
constexpr char kOtherBoot[] = "11111111-2222-4333-8444-555555555555";

TEST(SameHostTest, OneHostNeedsBothIdsNonEmptyAndEqual) {
  EXPECT_TRUE(scheduler::OnOneHost({kMachine, kBoot}, {kMachine, kBoot}));
  // A cloned image booted elsewhere: the same machine id, another boot.
  EXPECT_FALSE(scheduler::OnOneHost({kMachine, kBoot}, {kMachine, kOtherBoot}));
  EXPECT_FALSE(scheduler::OnOneHost({"", kBoot}, {"", kBoot}));        // Android: no machine id
  EXPECT_FALSE(scheduler::OnOneHost({kMachine, ""}, {kMachine, ""}));  // no boot id
  EXPECT_FALSE(scheduler::OnOneHost({"", ""}, {"", ""}));
  // Turns unless both are pinned to CPUs of their own.
  EXPECT_TRUE(scheduler::TakeTurns({kMachine, kBoot, true}, {kMachine, kBoot, false}));
  EXPECT_FALSE(scheduler::TakeTurns({kMachine, kBoot, true}, {kMachine, kBoot, true}));
  EXPECT_FALSE(scheduler::TakeTurns({kMachine, kBoot}, {kMachine, kOtherBoot}));
  EXPECT_EQ(scheduler::ShortHostId({kMachine, kBoot}), "0f1e2d3c");
  EXPECT_EQ(scheduler::ShortHostId({kMachine, ""}), "");
  EXPECT_TRUE(scheduler::IsHostIdText(kMachine));
  EXPECT_TRUE(scheduler::IsHostIdText(kBoot));
  EXPECT_FALSE(scheduler::IsHostIdText(""));
  EXPECT_FALSE(scheduler::IsHostIdText("0F1E"));  // read lower-cased by the agent
  EXPECT_FALSE(scheduler::IsHostIdText("uninitialized"));
  EXPECT_FALSE(scheduler::IsHostIdText(std::string(65, 'a')));
  // Listing and compare: a1, a2 and a3 on one host; a clone and an unknown host apart.
  const std::vector<HostIdentity> hosts = {
      {kMachine, kBoot}, {kMachine, kOtherBoot}, {kMachine, kBoot}, {"", ""}, {kMachine, kBoot}};
  EXPECT_EQ(scheduler::SameHostAs(hosts), (std::vector<std::vector<size_t>>{{2, 4}, {}, {0, 4}, {}, {0, 2}}));
  EXPECT_EQ(scheduler::OneMachineNotes({"a1", "clone", "a2", "phone", "a3"}, hosts),
            (std::vector<std::string>{
                "a1 and a2 are one machine (same machine-id and boot): their differences are not between devices",
                "a1 and a3 are one machine (same machine-id and boot): their differences are not between devices",
                "a2 and a3 are one machine (same machine-id and boot): their differences are not between devices"}));
}

std::string HostedAgent(Store& store, const std::string& name, const std::string& machine_id,
                        const std::string& boot_id, bool exclusive_cpus = false) {
  AgentRegistration reg;
  reg.name = name;
  reg.credential_sha256 = "hash-" + name;
  reg.host.set_arch("x86_64");
  reg.session_id = "s-" + name;
  reg.machine_id = machine_id;
  reg.boot_id = boot_id;
  reg.exclusive_cpus = exclusive_cpus;
  auto id = store.RegisterAgent(reg);
  EXPECT_TRUE(id.ok()) << id.status();
  return id.ok() ? *id : "";
}

std::set<std::string> AgentsOf(const absl::StatusOr<std::vector<ClaimedJob>>& claimed) {
  std::set<std::string> agents;
  EXPECT_TRUE(claimed.ok()) << claimed.status();
  if (claimed.ok()) {
    for (const ClaimedJob& job : *claimed) agents.insert(job.agent_id);
  }
  return agents;
}

// The store tests of this file: StoreConformanceTest on every backend.
class SameHostStoreTest : public StoreConformanceTest {};

// Two agents on one host: the second claims nothing while the first runs a job, and
// gets its job once that ends. Another boot of the same machine id and an agent without
// identity are other devices; two agents both started with --exclusive_cpus run side by
// side, one alone does not.
TEST_P(SameHostStoreTest, OneJobPerHostUnlessBothHaveExclusiveCpus) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::string a1 = HostedAgent(*store, "a1", kMachine, kBoot);
  const std::string a2 = HostedAgent(*store, "a2", kMachine, kBoot);
  const std::string clone = HostedAgent(*store, "clone", kMachine, kOtherBoot);
  const std::string phone = HostedAgent(*store, "phone", "", "");
  ASSERT_TRUE(store->CreateRun(MakeRun({a1, a2, clone, phone})).ok());
  auto first = store->ClaimJobs({a1, a2, clone, phone}, absl::Seconds(30));
  EXPECT_EQ(AgentsOf(first), (std::set<std::string>{a1, clone, phone}));
  EXPECT_TRUE(AgentsOf(store->ClaimJobs({a2}, absl::Seconds(30))).empty());  // a1 runs its job
  ASSERT_TRUE(first.ok());
  for (const ClaimedJob& job : *first) {
    if (job.agent_id == a1) {
      ASSERT_TRUE(store->FinishJob(job.assignment.job_id(), a1, JobOutcome{true, false, ""}).ok());
    }
  }
  EXPECT_EQ(AgentsOf(store->ClaimJobs({a2}, absl::Seconds(30))), (std::set<std::string>{a2}));

  // The opt-out: both pinned to CPUs of their own.
  const std::string p1 = HostedAgent(*store, "p1", "aa", "bb", /*exclusive_cpus=*/true);
  const std::string p2 = HostedAgent(*store, "p2", "aa", "bb", /*exclusive_cpus=*/true);
  const std::string p3 = HostedAgent(*store, "p3", "aa", "bb", /*exclusive_cpus=*/false);
  ASSERT_TRUE(store->CreateRun(MakeRun({p1, p2, p3})).ok());
  EXPECT_EQ(AgentsOf(store->ClaimJobs({p1, p2, p3}, absl::Seconds(30))), (std::set<std::string>{p1, p2}));
  EXPECT_TRUE(AgentsOf(store->ClaimJobs({p3}, absl::Seconds(30))).empty());
  // An agent with no queued job keeps no neighbour waiting.
  const std::string q1 = HostedAgent(*store, "q1", "cc", "dd");
  const std::string q2 = HostedAgent(*store, "q2", "cc", "dd");
  ASSERT_TRUE(store->CreateRun(MakeRun({q2})).ok());
  EXPECT_EQ(AgentsOf(store->ClaimJobs({q1, q2}, absl::Seconds(30))), (std::set<std::string>{q2}));
}

// A run created with its idle agents assigned at once (CreateRunAndClaim) assigns one
// job per host too: the neighbour's job stays queued.
TEST_P(SameHostStoreTest, ARunAssignedAtOnceGivesOneJobPerHost) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::string a1 = HostedAgent(*store, "a1", kMachine, kBoot);
  const std::string a2 = HostedAgent(*store, "a2", kMachine, kBoot);
  const std::string b = HostedAgent(*store, "b", kMachine, kOtherBoot);
  auto created = store->CreateRunAndClaim(MakeRun({a1, a2, b}), {a1, a2, b}, absl::Seconds(30));
  ASSERT_TRUE(created.ok()) << created.status();
  std::set<std::string> assigned;
  for (const ClaimedJob& job : created->claimed) assigned.insert(job.agent_id);
  EXPECT_EQ(assigned, (std::set<std::string>{a1, b}));
  EXPECT_SQL_EQ(Sql("SELECT count(*) FROM jobs WHERE status = 'queued' AND agent_id = '" + a2 + "'"), 1);
  auto run = store->GetRun(created->run_id);
  ASSERT_TRUE(run.ok()) << run.status();
  for (const v1::JobInfo& job : run->jobs()) EXPECT_EQ(job.status(), job.agent_name() == "a2" ? "queued" : "assigned");
}

// Claims through two coordinators at the same moment for two agents of one host: one
// job between them (the host's advisory lock orders the claims).
TEST_P(SameHostStoreTest, ConcurrentClaimsThroughTwoCoordinatorsGiveOneJobPerHost) {
  auto store1 = OpenStore("c1");
  auto store2 = OpenStore("c2");
  ASSERT_NE(store1, nullptr);
  ASSERT_NE(store2, nullptr);
  for (int round = 0; round < 5; ++round) {
    const std::string boot = absl::StrCat("0000000", round);
    const std::string x1 = HostedAgent(*store1, absl::StrCat("x1-", round), kMachine, boot);
    const std::string x2 = HostedAgent(*store1, absl::StrCat("x2-", round), kMachine, boot);
    ASSERT_TRUE(store1->CreateRun(MakeRun({x1, x2})).ok());
    std::set<std::string> c1, c2;
    std::thread t1([&] { c1 = AgentsOf(store1->ClaimJobs({x1}, absl::Seconds(30))); });
    std::thread t2([&] { c2 = AgentsOf(store2->ClaimJobs({x2}, absl::Seconds(30))); });
    t1.join();
    t2.join();
    EXPECT_EQ(c1.size() + c2.size(), 1u) << "round " << round;
  }
}

// `agents list` (ListAgents): each agent's host identity and the other agents on its host.
TEST_P(SameHostStoreTest, AgentsListNamesTheAgentsOnTheSameHost) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  HostedAgent(*store, "a1", kMachine, kBoot);
  HostedAgent(*store, "a2", kMachine, kBoot, /*exclusive_cpus=*/true);
  HostedAgent(*store, "a3", kMachine, kBoot);
  HostedAgent(*store, "clone", kMachine, kOtherBoot);
  HostedAgent(*store, "phone", "", "");
  auto agents = store->ListAgents();
  ASSERT_TRUE(agents.ok()) << agents.status();
  std::map<std::string, v1::AgentInfo> by_name;
  for (const v1::AgentInfo& a : *agents) by_name[a.name()] = a;
  ASSERT_EQ(by_name.size(), 5u);
  EXPECT_EQ(std::vector<std::string>(by_name["a1"].same_host_as().begin(), by_name["a1"].same_host_as().end()),
            (std::vector<std::string>{"a2", "a3"}));
  EXPECT_EQ(by_name["a2"].same_host_as_size(), 2);
  EXPECT_TRUE(by_name["a2"].exclusive_cpus());
  EXPECT_EQ(by_name["a1"].machine_id(), kMachine);
  EXPECT_EQ(by_name["a1"].boot_id(), kBoot);
  EXPECT_EQ(by_name["clone"].same_host_as_size(), 0);
  EXPECT_EQ(by_name["phone"].same_host_as_size(), 0);
  EXPECT_EQ(by_name["phone"].machine_id(), "");
  // A removed agent is no longer a neighbour.
  ASSERT_TRUE(store->RemoveAgent("a3").ok());
  agents = store->ListAgents();
  ASSERT_TRUE(agents.ok());
  for (const v1::AgentInfo& a : *agents) {
    if (a.name() == "a1") {
      EXPECT_EQ(a.same_host_as_size(), 1);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Stores, SameHostStoreTest, ::testing::ValuesIn(StoreBackends()),
                         [](const ::testing::TestParamInfo<BackendFactory>& info) { return info.param.name; });

}  // namespace
}  // namespace fleetmark::store
