// The fixture of the `fleetmark` fleet-command tests: a real fleetmark-coordinator on a
// fresh PostgreSQL database (FLEETMARK_TEST_PG_URI; tests/integration's harness), and
// Fleet(args), which runs `fleetmark args` against it with its admin token.
#pragma once

#include <memory>
#include <string>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/cli/cli_fixture.h"
#include "tests/integration/fleet_harness.h"

namespace fleetmark_cli_test {

class CliFleetTest : public CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    const std::string server = fleetmark::testing::TestPgUri();
    if (server.empty()) {
      if (fleetmark::testing::PgRequired()) GTEST_FAIL() << "FLEETMARK_TEST_PG_URI is not set";
      GTEST_SKIP() << "FLEETMARK_TEST_PG_URI is not set";
    }
    auto db = fleetmark::testing::TestDatabase::Create(server);
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
    fleetmark::testing::CoordinatorConfig config;
    config.database_uri = db_->uri();
    ASSERT_NO_FATAL_FAILURE(Configure(config));
    auto coordinator = fleetmark::testing::CoordinatorProcess::Start(dir_.string(), config);
    ASSERT_TRUE(coordinator.ok()) << coordinator.status();
    coordinator_ = *std::move(coordinator);
  }
  // Adds to the coordinator's configuration before it starts (e.g. TLS flags).
  virtual void Configure(fleetmark::testing::CoordinatorConfig& /*config*/) {}

  void TearDown() override {
    coordinator_.reset();  // killed before its database is dropped
    db_.reset();
    CliTest::TearDown();
  }
  std::string ConnectionFlags() const {
    return " --coordinator " + coordinator_->address() + " --admin_token_file " + (dir_ / "admin_token").string();
  }
  CliResult Fleet(const std::string& args) { return Cli(args + ConnectionFlags()); }

  // Starts a real agent `name` (with --labels `labels`, "" = none) enrolled with the
  // coordinator and waits until it is online; it runs until the fixture is destroyed.
  void StartAgent(const std::string& name = "w1", const std::string& labels = "") {
    fleetmark::testing::AgentConfig config;
    config.name = name;
    config.labels = labels;
    config.token = coordinator_->config().enrollment_token;
    auto agent = fleetmark::testing::AgentProcess::Start(dir_.string(), coordinator_->address(), config);
    ASSERT_TRUE(agent.ok()) << agent.status();
    agent_ = *std::move(agent);
    fleetmark::testing::ControlClient control(coordinator_->address(), coordinator_->config().admin_token);
    ASSERT_TRUE(control.WaitOnline(1, absl::Seconds(60)).ok());
  }

  std::unique_ptr<fleetmark::testing::AgentProcess> agent_;
  std::unique_ptr<fleetmark::testing::TestDatabase> db_;
  std::unique_ptr<fleetmark::testing::CoordinatorProcess> coordinator_;
};

}  // namespace fleetmark_cli_test
