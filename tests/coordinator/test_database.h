// A private PostgreSQL database for one test: created on the server named by
// FLEETMARK_TEST_PG_URI, dropped (WITH (FORCE)) at destruction. Tests needing it call
// FLEETMARK_TEST_DATABASE_OR_SKIP(db), which skips only when FLEETMARK_TEST_PG_URI is
// unset and FLEETMARK_TEST_REQUIRE_PG is unset (a developer without PostgreSQL), and
// fails otherwise.
#pragma once

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <pqxx/pqxx>

#include "absl/strings/str_cat.h"

namespace fleetmark::testing {

class TestDatabase {
 public:
  // Creates the database; on failure uri() is empty and error() says why.
  TestDatabase() {
    const char* server = std::getenv("FLEETMARK_TEST_PG_URI");
    if (server == nullptr || *server == '\0') {
      error_ = "FLEETMARK_TEST_PG_URI is not set";
      return;
    }
    static std::atomic<int> counter{0};
    name_ = absl::StrCat("fmtest_", getpid(), "_", counter.fetch_add(1), "_", std::rand() % 100000);
    server_uri_ = server;
    try {
      pqxx::connection conn(server_uri_);
      pqxx::nontransaction txn(conn);
      txn.exec(absl::StrCat("CREATE DATABASE ", name_));
    } catch (const std::exception& e) {
      error_ = absl::StrCat("cannot create test database: ", e.what());
      return;
    }
    uri_ = WithDatabase(server_uri_, name_);
  }
  ~TestDatabase() {
    if (uri_.empty()) return;
    try {
      pqxx::connection conn(server_uri_);
      pqxx::nontransaction txn(conn);
      txn.exec(absl::StrCat("DROP DATABASE IF EXISTS ", name_, " WITH (FORCE)"));
    } catch (...) {
    }
  }
  const std::string& uri() const { return uri_; }
  const std::string& error() const { return error_; }

  static bool Required() {
    const char* require = std::getenv("FLEETMARK_TEST_REQUIRE_PG");
    return require != nullptr && *require != '\0';
  }

  // `uri` with its database name replaced by `database`.
  static std::string WithDatabase(const std::string& uri, const std::string& database) {
    const size_t scheme = uri.find("://");
    const size_t query = uri.find('?');
    const std::string base = uri.substr(0, query);
    const std::string rest = query == std::string::npos ? "" : uri.substr(query);
    const size_t slash = base.find('/', scheme == std::string::npos ? 0 : scheme + 3);
    return (slash == std::string::npos ? base : base.substr(0, slash)) + "/" + database + rest;
  }

 private:
  std::string server_uri_, name_, uri_, error_;
};

}  // namespace fleetmark::testing

// Declares `var` (a TestDatabase); skips or fails the test if it is unavailable.
#define FLEETMARK_TEST_DATABASE_OR_SKIP(var)                                                                  \
  ::fleetmark::testing::TestDatabase var;                                                                     \
  if (var.uri().empty()) {                                                                                    \
    if (!::fleetmark::testing::TestDatabase::Required() && std::getenv("FLEETMARK_TEST_PG_URI") == nullptr) { \
      GTEST_SKIP() << "PostgreSQL test skipped: " << var.error();                                             \
    }                                                                                                         \
    FAIL() << "PostgreSQL required (FLEETMARK_TEST_REQUIRE_PG set): " << var.error();                         \
  }
