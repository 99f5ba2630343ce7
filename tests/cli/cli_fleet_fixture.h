// The fixture of the `fleetmark` fleet-command tests: a real coordinator and
// Fleet(args), which runs `fleetmark args` against it with its admin token. Where the
// coordinator runs and keeps its rows is the fixture's one choice (FleetCoordinator):
//   - kMemoryProcess (CliFleetTest): a fleetmark-coordinator process (tests/integration's
//     harness) with --store=memory: runs on every machine;
//   - kMemoryInProcess: a service::Coordinator in this process on a MemoryDatabase the
//     test also writes through a MemoryStore (CliStoreTest, cli_store_fixture.h, which
//     links the coordinator library): runs on every machine;
//   - kPostgresProcess (CliFleetPgTest): a fleetmark-coordinator process on a fresh
//     PostgreSQL database (FLEETMARK_TEST_PG_URI; skipped without it unless
//     FLEETMARK_TEST_REQUIRE_PG), for tests that read or write that database with SQL,
//     restart the coordinator, stop its database or configure its process (Configure).
#pragma once

#include <memory>
#include <string>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/cli/cli_fixture.h"
#include "tests/integration/fleet_harness.h"

namespace fleetmark_cli_test {

enum class FleetCoordinator { kMemoryProcess, kMemoryInProcess, kPostgresProcess };

class CliFleetTest : public CliTest {
 protected:
  explicit CliFleetTest(FleetCoordinator where = FleetCoordinator::kMemoryProcess) : where_(where) {}

  void SetUp() override {
    CliTest::SetUp();
    fleetmark::testing::CoordinatorConfig config;
    admin_token_ = config.admin_token;
    enrollment_token_ = config.enrollment_token;
    if (where_ == FleetCoordinator::kMemoryInProcess) {
      ASSERT_NO_FATAL_FAILURE(StartInProcess(config));
      return;
    }
    if (where_ == FleetCoordinator::kPostgresProcess) {
      const std::string server = fleetmark::testing::TestPgUri();
      if (server.empty()) {
        if (fleetmark::testing::PgRequired()) GTEST_FAIL() << "FLEETMARK_TEST_PG_URI is not set";
        GTEST_SKIP() << "FLEETMARK_TEST_PG_URI is not set";
      }
      auto db = fleetmark::testing::TestDatabase::Create(server);
      ASSERT_TRUE(db.ok()) << db.status();
      db_ = *std::move(db);
      config.database_uri = db_->uri();
    } else {
      config.memory_store = true;
    }
    ASSERT_NO_FATAL_FAILURE(Configure(config));
    auto coordinator = fleetmark::testing::CoordinatorProcess::Start(dir_.string(), config);
    ASSERT_TRUE(coordinator.ok()) << coordinator.status();
    coordinator_ = *std::move(coordinator);
    address_ = coordinator_->address();
  }
  // Adds to the coordinator process's configuration before it starts (e.g. TLS flags);
  // not called for kMemoryInProcess.
  virtual void Configure(fleetmark::testing::CoordinatorConfig& /*config*/) {}
  // kMemoryInProcess: starts the coordinator in this process with `config`'s tokens and
  // timings and sets address_ (CliStoreTest does; cli_store_fixture.h).
  virtual void StartInProcess(const fleetmark::testing::CoordinatorConfig& /*config*/) {
    FAIL() << "kMemoryInProcess: only CliStoreTest starts an in-process coordinator";
  }
  // Stops what StartInProcess started (before the temporary directory goes).
  virtual void StopInProcess() {}

  void TearDown() override {
    agent_.reset();
    coordinator_.reset();  // killed before its database is dropped
    StopInProcess();
    db_.reset();
    CliTest::TearDown();
  }
  std::string ConnectionFlags() const {
    return " --coordinator " + address_ + " --admin_token_file " + (dir_ / "admin_token").string();
  }
  CliResult Fleet(const std::string& args) { return Cli(args + ConnectionFlags()); }

  // Starts a real agent `name` (with --labels `labels`, "" = none) enrolled with the
  // coordinator and waits until it is online; it runs until the fixture is destroyed.
  void StartAgent(const std::string& name = "w1", const std::string& labels = "") {
    fleetmark::testing::AgentConfig config;
    config.name = name;
    config.labels = labels;
    config.token = enrollment_token_;
    auto agent = fleetmark::testing::AgentProcess::Start(dir_.string(), address_, config);
    ASSERT_TRUE(agent.ok()) << agent.status();
    agent_ = *std::move(agent);
    fleetmark::testing::ControlClient control(address_, admin_token_);
    ASSERT_TRUE(control.WaitOnline(1, absl::Seconds(60)).ok());
  }

  const FleetCoordinator where_;
  std::string address_;  // the coordinator's gRPC address
  std::string admin_token_, enrollment_token_;
  std::unique_ptr<fleetmark::testing::AgentProcess> agent_;
  std::unique_ptr<fleetmark::testing::TestDatabase> db_;                 // kPostgresProcess only
  std::unique_ptr<fleetmark::testing::CoordinatorProcess> coordinator_;  // null for kMemoryInProcess
};

// A CliFleetTest whose coordinator process runs on PostgreSQL (db_).
class CliFleetPgTest : public CliFleetTest {
 protected:
  CliFleetPgTest() : CliFleetTest(FleetCoordinator::kPostgresProcess) {}
};

}  // namespace fleetmark_cli_test
