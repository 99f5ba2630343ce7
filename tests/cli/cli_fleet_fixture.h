// The fixture of the `fleetmark` fleet-command tests: a real fleetmark-coordinator on a
// fresh PostgreSQL database (FLEETMARK_TEST_PG_URI; tests/integration's harness), and
// Fleet(args), which runs `fleetmark args` against it with its admin token.
#pragma once

#include <memory>
#include <string>

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

  std::unique_ptr<fleetmark::testing::TestDatabase> db_;
  std::unique_ptr<fleetmark::testing::CoordinatorProcess> coordinator_;
};

}  // namespace fleetmark_cli_test
