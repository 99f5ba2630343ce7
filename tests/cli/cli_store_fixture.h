// A CliFleetTest that also writes to the coordinator's database through its Store (the
// path agents' results take): agents registered with a given HostInfo, a run whose jobs
// are claimed, and results stored for them. Shared by the tests that need stored results
// with chosen fields (emulated agents, device fingerprints, health, compare, show) or
// read the database behind the CLI (prune, import).
//
// CliStoreTest runs an in-process coordinator on a MemoryDatabase and writes through a
// MemoryStore on the same database (every machine); CliStorePgTest a coordinator process
// on PostgreSQL, written through a PgStore, with Sql() (FLEETMARK_TEST_PG_URI).
#pragma once

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "coordinator/service/coordinator.h"
#include "coordinator/store/memory_store.h"
#include "coordinator/store/store.h"
#include "gtest/gtest.h"
#include "tests/cli/cli_fleet_fixture.h"

namespace fleetmark_cli_test {

class CliStoreTest : public CliFleetTest {
 protected:
  explicit CliStoreTest(FleetCoordinator where = FleetCoordinator::kMemoryInProcess) : CliFleetTest(where) {}

  void SetUp() override {
    CliFleetTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    fleetmark::store::StoreOptions options;
    if (memory_ != nullptr) {
      store_ = std::make_unique<fleetmark::store::MemoryStore>(options, memory_);
    } else {
      options.connection.uri = db_->uri();
      auto opened = fleetmark::store::Store::Open(options);
      ASSERT_TRUE(opened.ok()) << opened.status();
      store_ = *std::move(opened);
    }
    ASSERT_TRUE(store_->Migrate().ok());
  }

  // Runs `sql` (one or more statements, committed) on the coordinator's database; the
  // first column of its first row as text, "" when there is none or it is NULL.
  // PostgreSQL only (CliStorePgTest): a test failure on the memory store.
  std::string Sql(const std::string& sql) {
    if (db_ == nullptr) {
      ADD_FAILURE() << "no SQL on the memory store (use CliStorePgTest): " << sql;
      return "";
    }
    pqxx::connection conn(db_->uri());
    pqxx::work txn(conn);
    pqxx::result r = txn.exec(sql);
    txn.commit();
    return r.empty() || r[0][0].is_null() ? "" : r[0][0].as<std::string>();
  }

  // Registers agent `name` with `host`; its id ("" and a test failure on error).
  // `machine_id`, `boot_id`, `exclusive_cpus`: its hello's host identity.
  std::string Register(const std::string& name, const fleetmark::v1::HostInfo& host, const std::string& machine_id = "",
                       const std::string& boot_id = "", bool exclusive_cpus = false) {
    fleetmark::store::AgentRegistration reg;
    reg.name = name;
    reg.machine_id = machine_id;
    reg.boot_id = boot_id;
    reg.exclusive_cpus = exclusive_cpus;
    reg.credential_sha256 = std::string(64, 'a');
    reg.host = host;
    reg.session_id = "s-" + name;
    auto id = store_->RegisterAgent(reg);
    EXPECT_TRUE(id.ok()) << id.status();
    return id.ok() ? *id : "";
  }

  // A run of plan `plan_name` with one job per agent, every job claimed; the run id, the
  // claimed jobs in *jobs.
  std::string CreateClaimedRun(const std::string& plan_name, const std::vector<std::string>& agent_ids,
                               uint32_t cases_total, std::vector<fleetmark::store::ClaimedJob>* jobs) {
    fleetmark::store::NewRun run;
    run.plan.set_name(plan_name);
    run.agent_ids = agent_ids;
    run.cases_total = cases_total;
    auto created = store_->CreateRun(run);
    EXPECT_TRUE(created.ok()) << created.status();
    if (!created.ok()) return "";
    auto claimed = store_->ClaimJobs(agent_ids, absl::Hours(1));
    EXPECT_TRUE(claimed.ok()) << claimed.status();
    if (claimed.ok()) *jobs = *std::move(claimed);
    EXPECT_EQ(jobs->size(), agent_ids.size());
    return created->run_id();
  }

  // An OK batch result number `n` of `strategy` (arithmetic, blocking, any) in `job`.
  static fleetmark::v1::CaseResult BatchResult(int n, const fleetmark::store::ClaimedJob& job,
                                               const std::string& strategy, double median_ns) {
    fleetmark::v1::CaseResult r;
    r.set_result_id(absl::StrFormat("00000000-0000-4000-8000-%012d", n));
    r.set_job_id(job.assignment.job_id());
    r.mutable_spec()->mutable_strategy()->set_name(strategy);
    r.mutable_spec()->set_case_id(absl::StrCat("batch/arithmetic/blocking/", strategy, "/any"));
    r.mutable_spec()->set_scenario("batch");
    r.mutable_spec()->set_workload("arithmetic");
    r.mutable_spec()->set_io_mode("blocking");
    r.mutable_spec()->set_placement("any");
    r.set_status(fleetmark::v1::CASE_STATUS_OK);
    r.mutable_stats()->set_count(3);
    r.mutable_stats()->set_median_ns(median_ns);
    r.mutable_stats()->set_ci_low_ns(median_ns * 0.99);
    r.mutable_stats()->set_ci_high_ns(median_ns * 1.01);
    return r;
  }

  // Stores `results`, results[i] as measured by agent_ids[i]; a test failure unless all
  // are stored.
  void Insert(std::vector<fleetmark::v1::CaseResult>& results, const std::vector<std::string>& agent_ids) {
    std::vector<fleetmark::store::Store::AgentResult> batch;
    for (size_t i = 0; i < results.size(); ++i) batch.push_back({agent_ids[i], &results[i]});
    auto stored = store_->InsertResults(batch);
    ASSERT_TRUE(stored.ok()) << stored.status();
    for (const auto& o : *stored) ASSERT_TRUE(o.stored) << o.message;
  }

  std::unique_ptr<fleetmark::store::Store> store_;
  // kMemoryInProcess: the coordinator and the database it shares with store_.
  std::shared_ptr<fleetmark::store::MemoryDatabase> memory_;
  std::unique_ptr<fleetmark::service::Coordinator> in_process_;

  // A service::Coordinator on loopback over a new MemoryDatabase (memory_), with the
  // harness's tokens and timings; its admin token file is written as the harness does.
  void StartInProcess(const fleetmark::testing::CoordinatorConfig& config) override {
    memory_ = std::make_shared<fleetmark::store::MemoryDatabase>();
    fleetmark::service::CoordinatorOptions options;
    options.store = fleetmark::service::StoreBackend::kMemory;
    options.memory_database = memory_;
    options.listen_address = "127.0.0.1:0";
    options.admin_token = config.admin_token;
    options.enrollment_tokens = {config.enrollment_token};
    options.heartbeat_interval = config.heartbeat_interval;
    options.job_lease = config.job_lease;
    options.sweep_interval = config.sweep_interval;
    options.max_attempts = config.max_attempts;
    options.executor_threads = 2;
    auto started = fleetmark::service::Coordinator::Start(options);
    ASSERT_TRUE(started.ok()) << started.status();
    in_process_ = *std::move(started);
    address_ = "127.0.0.1:" + std::to_string(in_process_->port());
    std::ofstream(dir_ / "admin_token") << config.admin_token;
  }
  void StopInProcess() override {
    store_.reset();
    in_process_.reset();
  }
};

// A CliStoreTest on PostgreSQL: Sql() works; the coordinator is a process.
class CliStorePgTest : public CliStoreTest {
 protected:
  CliStorePgTest() : CliStoreTest(FleetCoordinator::kPostgresProcess) {}
};

}  // namespace fleetmark_cli_test
