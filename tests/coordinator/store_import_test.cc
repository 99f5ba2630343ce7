// The store conformance suite's cases of `fleetmark results import`
// (Store::ImportResults, issue 34 item 1), run on every backend like the rest of
// store_conformance_test.cc: a local results file stored once in a run marked imported,
// under a device record marked imported (never selected) or under the agent of that
// machine; a second import stores nothing; a result an agent stored is not stored again;
// an unknown schema version or a result an agent could not store is refused with
// nothing stored.
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "coordinator/store/store.h"
#include "engine/topology/fingerprint.h"
#include "tests/coordinator/store_backends.h"
#include "tests/coordinator/store_conformance.h"
#include "tests/coordinator/import_fixtures.h"
#include "tests/coordinator/store_fixtures.h"

namespace fleetmark::store {
namespace {

using ::testing::HasSubstr;

const v1::AgentInfo* Named(const std::vector<v1::AgentInfo>& agents, const std::string& name) {
  for (const v1::AgentInfo& a : agents) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

TEST_P(StoreConformanceTest, AnImportIsStoredOnceUnderAnImportedDeviceRecord) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  auto first = store->ImportResults(LocalFile({Id(1), Id(2), Id(3)}), "import:alice");
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->stored, 3u);
  EXPECT_EQ(first->already_stored, 0u);
  ASSERT_FALSE(first->run_id.empty());
  ASSERT_EQ(first->devices.size(), 1u);
  EXPECT_EQ(first->devices[0].name, "laptop");
  EXPECT_EQ(first->devices[0].agent_name, "laptop-imported");
  EXPECT_FALSE(first->devices[0].matched);

  auto run = store->GetRun(first->run_id);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_TRUE(run->imported());
  EXPECT_EQ(run->status(), "done");
  EXPECT_EQ(run->plan_name(), "laptop-sweep");
  EXPECT_EQ(run->submitted_by(), "import:alice");
  EXPECT_EQ(run->created_unix_ns(), kCreatedNs);
  EXPECT_EQ(run->finished_unix_ns(), kCreatedNs + 5'000'000'000);
  EXPECT_EQ(run->results(), 3u);
  ASSERT_EQ(run->jobs_size(), 1);
  EXPECT_EQ(run->jobs(0).status(), "done");
  EXPECT_EQ(run->jobs(0).agent_name(), "laptop-imported");

  // The device record is listed as imported and is never selected.
  auto agents = store->ListAgents();
  ASSERT_TRUE(agents.ok()) << agents.status();
  const v1::AgentInfo* record = Named(*agents, "laptop-imported");
  ASSERT_NE(record, nullptr);
  EXPECT_TRUE(record->imported());
  EXPECT_EQ(record->state(), "imported");
  EXPECT_EQ(record->host().hostname(), "laptop");
  auto summaries = store->ListAgentSummaries();
  ASSERT_TRUE(summaries.ok()) << summaries.status();
  EXPECT_TRUE(summaries->empty());
  // GET /metrics counts it as imported, never as an offline agent.
  auto fleet = store->CountFleet();
  ASSERT_TRUE(fleet.ok()) << fleet.status();
  EXPECT_EQ(fleet->agents_by_state.at("imported"), 1);
  EXPECT_EQ(fleet->agents_by_state.at("offline"), 0);
  EXPECT_EQ(fleet->agents_by_state.at("online"), 0);

  // The results keep their run and job, and read back.
  auto exported = store->ExportResults(first->run_id, "");
  ASSERT_TRUE(exported.ok()) << exported.status();
  ASSERT_EQ(exported->results_size(), 3);
  EXPECT_EQ(exported->results(0).job_id(), run->jobs(0).job_id());
  EXPECT_EQ(exported->results(0).run_id(), first->run_id);
  EXPECT_TRUE(exported->run().imported());
  EXPECT_EQ(exported->hosts().at("laptop-imported").hostname(), "laptop");

  // The same file again: nothing new, no run.
  auto again = store->ImportResults(LocalFile({Id(1), Id(2), Id(3)}), "import:alice");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->stored, 0u);
  EXPECT_EQ(again->already_stored, 3u);
  EXPECT_TRUE(again->run_id.empty());
  EXPECT_EQ(again->devices[0].agent_name, "");
  auto runs = store->ListRuns(10);
  ASSERT_TRUE(runs.ok()) << runs.status();
  EXPECT_EQ(runs->size(), 1u);
  EXPECT_SQL_EQ(Sql("SELECT count(*) FROM case_results"), 3);

  // A file with one more result: only it is stored, in a new run, under the same record.
  auto more = store->ImportResults(LocalFile({Id(1), Id(2), Id(3), Id(4)}), "import:alice");
  ASSERT_TRUE(more.ok()) << more.status();
  EXPECT_EQ(more->stored, 1u);
  EXPECT_EQ(more->already_stored, 3u);
  EXPECT_EQ(more->devices[0].agent_name, "laptop-imported");
  agents = store->ListAgents();
  ASSERT_TRUE(agents.ok()) << agents.status();
  EXPECT_EQ(agents->size(), 1u) << "one device record per machine";
  EXPECT_SQL_EQ(Sql("SELECT count(*) FROM case_results"), 4);
  EXPECT_SQL_EQ(Sql("SELECT count(*) FROM runs WHERE imported"), 2);
}

TEST_P(StoreConformanceTest, AnImportGoesToTheAgentOfThatMachine) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  AgentRegistration reg;
  reg.name = "bench-box";
  reg.credential_sha256 = std::string(64, 'a');
  reg.host = LaptopHost();
  reg.host.set_kernel("6.1.0-18");  // another kernel since: still the machine
  reg.session_id = "s-bench-box";
  auto agent_id = store->RegisterAgent(reg);
  ASSERT_TRUE(agent_id.ok()) << agent_id.status();
  // Another machine of that host name is not it.
  reg.name = "other-cpu";
  reg.host.set_cpu_model("Other CPU");
  reg.session_id = "s-other";
  ASSERT_TRUE(store->RegisterAgent(reg).ok());

  auto imported = store->ImportResults(LocalFile({Id(1), Id(2)}), "import:alice");
  ASSERT_TRUE(imported.ok()) << imported.status();
  ASSERT_EQ(imported->devices.size(), 1u);
  EXPECT_TRUE(imported->devices[0].matched);
  EXPECT_EQ(imported->devices[0].agent_name, "bench-box");
  EXPECT_EQ(imported->devices[0].agent_id, *agent_id);
  auto agents = store->ListAgents();
  ASSERT_TRUE(agents.ok()) << agents.status();
  EXPECT_EQ(agents->size(), 2u) << "no device record was created";
  for (const v1::AgentInfo& a : *agents) EXPECT_FALSE(a.imported()) << a.name();
  auto run = store->GetRun(imported->run_id);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_TRUE(run->imported());
  ASSERT_EQ(run->jobs_size(), 1);
  EXPECT_EQ(run->jobs(0).agent_name(), "bench-box");
  // The imported run's done job is never claimed.
  auto claimed = store->ClaimJobs({*agent_id}, absl::Seconds(30));
  ASSERT_TRUE(claimed.ok()) << claimed.status();
  EXPECT_TRUE(claimed->empty());
}

TEST_P(StoreConformanceTest, AResultAnAgentStoredIsNotImportedAgain) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const std::string a = Agent(*store, "a1");
  auto claimed = CreateAndClaim(*store, {a});
  ASSERT_TRUE(claimed.ok()) << claimed.status();
  const v1::CaseResult r = Result(Id(7), claimed->job_of.at(a), 100);
  auto inserted = store->InsertResults({{a, &r}});
  ASSERT_TRUE(inserted.ok()) << inserted.status();
  ASSERT_TRUE((*inserted)[0].stored);
  // An export of that run read back into the coordinator (upper-case id: the same UUID).
  v1::ResultsDocument document = LocalFile({absl::AsciiStrToUpper(Id(7)), Id(8)});
  auto imported = store->ImportResults(document, "import:bob");
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_EQ(imported->stored, 1u);
  EXPECT_EQ(imported->already_stored, 1u);
  // A result id twice in one file is stored once.
  document = LocalFile({Id(9), Id(10)});
  document.mutable_devices(0)->mutable_results(1)->set_result_id(Id(9));
  imported = store->ImportResults(document, "import:bob");
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_EQ(imported->stored, 1u);
  EXPECT_EQ(imported->already_stored, 1u);
  EXPECT_SQL_EQ(Sql("SELECT count(*) FROM case_results"), 3);  // 7 (the agent's), 8 and 9
}

TEST_P(StoreConformanceTest, AnImportOfAnUnknownSchemaOrABadResultStoresNothing) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  v1::ResultsDocument document = LocalFile({Id(1), Id(2)});
  document.set_schema_version(2);
  auto refused = store->ImportResults(document, "import:alice");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("document.schema_version: 1 <= schema_version <= 1"));
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("got 2"));
  document.set_schema_version(0);
  refused = store->ImportResults(document, "import:alice");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("before the results schema"));

  document = LocalFile({Id(1), "not-a-uuid"});
  refused = store->ImportResults(document, "import:alice");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("devices[0].results[1].result_id"));

  document = LocalFile({Id(1), Id(2)});
  document.mutable_devices(0)->mutable_results(1)->mutable_stats()->set_stddev_ns(-1);
  refused = store->ImportResults(document, "import:alice");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  // The readers' one check (report::CheckResultsDocument) names the device and the case.
  EXPECT_THAT(
      std::string(refused.status().message()),
      HasSubstr("case \"batch/arithmetic/blocking/direct/any/1\": stats.stddev_ns: a finite number >= 0, got -1"));

  document = LocalFile({Id(1), Id(2)});
  document.mutable_devices(0)->mutable_results(1)->set_status(static_cast<v1::CaseStatus>(999));
  refused = store->ImportResults(document, "import:alice");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("status: one of the CaseStatus names"));

  document = LocalFile({Id(1)});
  document.mutable_run()->set_plan_name(std::string(300, 'p'));
  refused = store->ImportResults(document, "import:alice");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("document.run.plan_name: at most 256 bytes"));

  auto runs = store->ListRuns(10);
  ASSERT_TRUE(runs.ok()) << runs.status();
  EXPECT_TRUE(runs->empty());
  auto agents = store->ListAgents();
  ASSERT_TRUE(agents.ok()) << agents.status();
  EXPECT_TRUE(agents->empty());
  EXPECT_SQL_EQ(Sql("SELECT count(*) FROM case_results"), 0);
}

}  // namespace
}  // namespace fleetmark::store
